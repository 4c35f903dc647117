"""Markdown tables from a bench/bench.py results file, ready for docs/PERFORMANCE.md.

    python bench/report.py results.json [more.json ...]

Several files (e.g. a 1k/10k run and a separate 100k run) are shown side by side,
each size with the machine line of its own run.

Times are wall-clock medians of whole processes; "x faster" is lifeline-context's
time over ours, so above 1 is better for git-lifeline.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Optional

SEED = "lifeline-context"


# Which figure of a timing the tables show: "s" (wall) or "cpu_s" (user + system).
_FIELD = ["s"]


@contextlib.contextmanager
def _reading(field: str):
    """The tables below read `field` of each timing while inside (see _FIELD)."""
    _FIELD[0] = field
    try:
        yield
    finally:
        _FIELD[0] = "s"


def fmt_s(t: Optional[dict]) -> str:
    if not t:
        return "—"
    s = t.get(_FIELD[0])
    if s is None:
        limit = t.get("timed_out_after_s")
        return f"> {limit:.0f} s" if limit else "—"
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def sec(t: Optional[dict]) -> Optional[float]:
    return t.get(_FIELD[0]) if t else None


def rate(n: int, t: Optional[dict]) -> str:
    s = sec(t)
    if s is None:
        return fmt_s(t)
    return f"{n / s:,.0f}/s"


def mb(t: Optional[dict]) -> str:
    return f"{t['rss_kb'] / 1024:.0f} MB" if t and t.get("rss_kb") else "—"


def faster(ours: Optional[dict], theirs: Optional[dict]) -> str:
    a, b = sec(ours), sec(theirs)
    if a is None or b is None:
        if a is not None and theirs and theirs.get("timed_out_after_s"):
            return f"> {theirs['timed_out_after_s'] / a:.0f}x faster"
        return ""
    return f"{b / a:.1f}x faster" if b >= a else f"{a / b:.1f}x slower"


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def realistic_table(sizes: list, field: str = "s") -> list:
    with _reading(field):
        return _realistic_table(sizes)


def _realistic_table(sizes: list) -> list:
    head = "| |" + "".join(f" {size_label(r['entries'])} ours | {size_label(r['entries'])} {SEED} | |" for r in sizes)
    lines = [head, "|---|" + "---|---|---|" * len(sizes)]

    def row(label, cells):
        lines.append(f"| {label} |" + "".join(f" {a} | {b} | {c} |" for a, b, c in cells))

    def pair(key, seed_key):
        return [(fmt_s(r.get(key)), fmt_s(r.get(seed_key)), faster(r.get(key), r.get(seed_key))) for r in sizes]

    row("`context`, warm", pair("context_warm", "seed_context"))
    row("`context`, cold: cache deleted", pair("context_cold", "seed_context"))
    row("`context`, cold: fresh clone", pair("context_clone", "seed_context"))
    row("`context` after a merge of older entries", [(fmt_s(r.get("context_merge_older")), "", "") for r in sizes])
    row("`context --query`", pair("query_warm", "seed_query"))
    row("`recall`", pair("recall_warm", "seed_recall"))
    row("`verify`, first run of a clone (nothing remembered)", pair("verify_first", "seed_verify"))
    row("`verify`", pair("verify", "seed_verify"))
    row(
        "`verify`, entries/s",
        [(rate(r["entries"], r.get("verify")), rate(r["entries"], r.get("seed_verify")), "") for r in sizes],
    )
    row("`log` (one append)", pair("log", "seed_log"))
    row('floor: `python -c "import pygit2, pydantic, click"`', [(fmt_s(r.get("floor")), "", "") for r in sizes])
    row("`log` / floor", [(_ratio(r.get("log"), r.get("floor")), "", "") for r in sizes])
    row(
        "import / migrate, entries/s",
        [
            (
                rate(r["entries"], r.get("import")),
                rate(r["entries"], r.get("migrate")),
                faster(r.get("import"), r.get("migrate")),
            )
            for r in sizes
        ],
    )
    row(
        "peak RSS: `context` cold / warm",
        [(f"{mb(r.get('context_cold'))} / {mb(r.get('context_warm'))}", mb(r.get("seed_context")), "") for r in sizes],
    )
    row(
        "pull of 1,000 new entries / `git fetch` of them",
        [
            (
                f"{fmt_s((r.get('pull') or {}).get('pull'))} / {fmt_s((r.get('pull') or {}).get('fetch'))}",
                "",
                _ratio((r.get("pull") or {}).get("pull"), (r.get("pull") or {}).get("fetch")),
            )
            for r in sizes
        ],
    )
    row(
        "post-commit hook, nothing to say (the hook alone)",
        [(fmt_s((r.get("hook") or {}).get("silent")), "", "") for r in sizes],
    )
    row(
        "`git commit --allow-empty` with / without the hook",
        [
            (
                f"{fmt_s((r.get('hook') or {}).get('commit_with_hook'))} / "
                f"{fmt_s((r.get('hook') or {}).get('commit_without_hook'))}",
                "",
                "",
            )
            for r in sizes
        ],
    )
    return lines


def _ratio(a: Optional[dict], b: Optional[dict]) -> str:
    x, y = sec(a), sec(b)
    return f"{x / y:.2f}x" if x is not None and y else "—"


def pathological_table(rows: list, field: str = "s") -> list:
    with _reading(field):
        return _pathological_table(rows)


def _pathological_table(rows: list) -> list:
    lines = [
        "| ledger | entries | import | migrate (lifeline-context) | `context` cold | `context` warm | "
        f"`context` ({SEED}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        what = (
            f"one decision revised {r['n']:,} times"
            if r["scenario"] == "chain"
            else f"{r['n']:,} decision+correction pairs"
        )
        lines.append(
            f"| {what} | {r['ledger']['entries']:,} | {fmt_s(r.get('import'))} | {fmt_s(r.get('migrate'))} | "
            f"{fmt_s(r.get('context_cold'))} | {fmt_s(r.get('context_warm'))} | "
            f"{fmt_s(r.get('seed_context'))} |"
        )
    return lines


def _judge(t: Optional[dict], ok) -> Optional[bool]:
    """ok(seconds) for a figure; a figure that timed out missed; None when not measured."""
    if t and t.get("timed_out_after_s") and t.get("s") is None:
        return False
    s = sec(t)
    return None if s is None else bool(ok(s))


def _at(sizes: list, n: int) -> Optional[dict]:
    return next((r for r in sizes if r["entries"] == n), None)


def goals_table(res: dict) -> list:
    """Each goal judged on wall time (as the goals are stated) and on CPU time."""
    wall, cpu = _goals(res, "s"), _goals(res, "cpu_s")

    def verdict(ok):
        return "not measured" if ok is None else ("met" if ok else "missed")

    lines = ["| goal | measured (wall) | | measured (CPU) | |", "|---|---|---|---|---|"]
    for (text, m1, ok1), (_, m2, ok2) in zip(wall, cpu, strict=True):
        lines.append(f"| {text} | {m1} | {verdict(ok1)} | {m2} | {verdict(ok2)} |")
    return lines


def _goals(res: dict, field: str) -> list:
    with _reading(field):
        return _goal_rows(res)


def _goal_rows(res: dict) -> list:
    sizes, patho = res.get("sizes", []), res.get("pathological", [])
    r10, r100 = _at(sizes, 10000), _at(sizes, 100000)
    big = max(sizes, key=lambda r: r["entries"]) if sizes else None
    lines: list = []

    def goal(text, measured, ok):
        lines.append((text, measured, ok))

    def versus(text, ours_t, theirs_t, factor):
        """ours at least `factor` times faster than lifeline-context (1: no slower)."""
        x, y = sec(ours_t), sec(theirs_t)
        measured = f"{fmt_s(ours_t)} vs {fmt_s(theirs_t)}"
        if x and y:
            measured += f" ({y / x:.1f}x faster)" if y >= x else f" ({x / y:.1f}x slower)"
        if _judge(ours_t, lambda s: True) is False:
            ok: Optional[bool] = False
        elif x is not None and y is None and _judge(theirs_t, lambda s: True) is False:
            ok = x * factor <= theirs_t["timed_out_after_s"] or None
        else:
            ok = None if x is None or y is None else y / x >= factor
        goal(text, measured, ok)

    if r10:
        versus(
            "`context` warm at 10k ≥ 5x faster than lifeline-context",
            r10.get("context_warm"),
            r10.get("seed_context"),
            5,
        )
        versus(
            "`context` cold (cache deleted) at 10k no slower than lifeline-context",
            r10.get("context_cold"),
            r10.get("seed_context"),
            1,
        )
        versus(
            "`context` in a fresh clone at 10k no slower than lifeline-context",
            r10.get("context_clone"),
            r10.get("seed_context"),
            1,
        )
        versus(
            "`context` after a merge of older entries at 10k no slower than lifeline-context",
            r10.get("context_merge_older"),
            r10.get("seed_context"),
            1,
        )
        versus("`verify` at 10k no slower than lifeline-context", r10.get("verify"), r10.get("seed_verify"), 1)
        floor = sec(r10.get("floor"))
        goal(
            "`log` at 10k ≤ 1.2x the floor",
            f"{fmt_s(r10.get('log'))} vs {fmt_s(r10.get('floor'))} ({_ratio(r10.get('log'), r10.get('floor'))})",
            None if not floor else _judge(r10.get("log"), lambda s: s <= 1.2 * floor),
        )
    goal(
        "`verify` at 100k ≥ 50,000 entries/s",
        rate(100000, r100.get("verify")) if r100 else "—",
        _judge(r100.get("verify") if r100 else None, lambda s: 100000 / s >= 50000),
    )
    if big:
        goal(
            f"import ≥ 20,000 entries/s (at {size_label(big['entries'])})",
            rate(big["entries"], big.get("import")),
            _judge(big.get("import"), lambda s: big["entries"] / s >= 20000),
        )
    c = r100.get("context_cold") if r100 else None
    goal(
        "cold cache build (`context` after deleting the cache) at 100k ≤ 5 s and ≤ 150 MB",
        (f"{fmt_s(c)}, {mb(c)}" if sec(c) is not None else fmt_s(c)) if c else "—",
        _judge(c, lambda s: s <= 5 and c["rss_kb"] <= 150 * 1024),
    )
    for r in patho:
        if r["scenario"] != "chain":
            continue
        limit = 2.0 if r["n"] <= 1000 else 10.0
        goal(
            f"one decision revised {r['n']:,} times, cold `context` ≤ {limit:.0f} s"
            + (' ("in seconds")' if r["n"] > 1000 else ""),
            fmt_s(r.get("context_cold")),
            _judge(r.get("context_cold"), lambda s, lim=limit: s <= lim),
        )
    hooks = [r for r in sizes if r.get("hook")]
    if hooks:
        h = hooks[-1]
        goal(
            f"post-commit hook ≤ 50 ms when it has nothing to say (at {size_label(h['entries'])})",
            fmt_s(h["hook"].get("silent")),
            _judge(h["hook"].get("silent"), lambda s: s <= 0.05),
        )
    return lines


def machine_lines(res: dict) -> list:
    out: list = []
    for run in res.get("runs") or [res]:
        out += _machine_lines(run)
    return out


def _machine_lines(res: dict) -> list:
    m = res.get("machine", {})
    cfg = res.get("config", {})
    what = [size_label(r["entries"]) for r in res.get("sizes", [])]
    what += [f"{r['scenario']} {r['n']:,}" for r in res.get("pathological", [])]
    return [
        f"Run of {', '.join(what)}. Machine: {m.get('nproc')} cores ({m.get('cpu')}), {m.get('memory')}, {m.get('os')}; "
        f"Python {m.get('python')} (lifeline-context on Python {m.get('seed_python')}, version "
        f"{m.get('lifeline_context')}); {m.get('libraries')}; {m.get('git')}. "
        f"Load average at start {m.get('load_average_at_start')}, at end {m.get('load_average_at_end')}.",
        f"Code measured: commit {m.get('commit')}"
        + (f" (git_lifeline/ as of {m['package_commit']})" if m.get("package_commit") else "")
        + f", {m.get('date')}. Medians of {cfg.get('runs')} runs "
        f"({cfg.get('import_runs')} for import/migrate, {cfg.get('cold_runs')} for the pathological ledgers); "
        f"timeout {cfg.get('timeout')} s; generator seed {cfg.get('seed')}.",
    ]


def render(res: dict) -> str:
    shapes = sorted({r.get("scenario", "realistic") for r in res.get("sizes", [])})
    out = [f"### {' and '.join(shapes).capitalize()} ledgers", ""]
    out += realistic_table(res.get("sizes", []))
    out += [
        "",
        "The same, in CPU time (user + system of the process and the children it waited for; "
        "steadier than wall time on a loaded machine):",
        "",
    ]
    out += realistic_table(res.get("sizes", []), "cpu_s")
    if res.get("pathological"):
        out += ["", "### Pathological ledgers", ""]
        out += pathological_table(res["pathological"])
        out += ["", "CPU time:", ""]
        out += pathological_table(res["pathological"], "cpu_s")
    out += ["", "### Against the goals", ""]
    out += goals_table(res)
    out += [""] + machine_lines(res) + [""]
    return "\n".join(out)


def merge(runs: list) -> dict:
    """One result of several runs: their sizes and pathological ledgers, each run's machine kept.
    Two runs of the same size and scenario become one column: a figure one of them measured
    wins over one the other skipped or timed out on (e.g. a long-timeout rerun of one row)."""
    by_size: dict = {}
    for run in runs:
        for r in run.get("sizes", []):
            key = (r.get("scenario", "realistic"), r["entries"])
            if key not in by_size:
                by_size[key] = dict(r)
                continue
            into = by_size[key]
            for k, v in r.items():
                was = into.get(k)
                if was is None or (
                    isinstance(was, dict)
                    and "s" in was
                    and was["s"] is None
                    and isinstance(v, dict)
                    and v.get("s") is not None
                ):
                    into[k] = v
    return {
        "sizes": sorted(by_size.values(), key=lambda r: r["entries"]),
        "pathological": [p for run in runs for p in run.get("pathological", [])],
        "runs": runs,
    }


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = [json.loads(Path(a).read_text()) for a in sys.argv[1:]]
    print(render(runs[0] if len(runs) == 1 else merge(runs)))


if __name__ == "__main__":
    main()
