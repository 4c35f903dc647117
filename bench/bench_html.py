"""The HTML view at scale, and the screenshot in docs/.

    python bench/bench_html.py measure [--sizes 1000,10000] [--runs 5]
    python bench/bench_html.py screenshot [docs/view.png]

measure: for each size, a ledger of that many entries (tests/kit/browser.synthetic: decisions
and revisions, notes, threads with checkpoints, open items) is exported with
`git lifeline export --format html` (timed as a separate process, interpreter start included),
and the file is loaded cold --runs times, each in a fresh headless Chromium, reading the
page's own paint timings over the DevTools protocol (a pipe): first paint, first contentful
paint, DOMContentLoaded, load, and when the timeline's first rows were built. Medians are
printed as a markdown table (the numbers in docs/VIEW.md).

screenshot: the demo ledger of the tests (tests/kit/browser.build_demo) as docs/view.png.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kit import browser  # noqa: E402


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (
        ["init", "-q"],
        ["config", "user.name", "Bench"],
        ["config", "user.email", "bench@example.com"],
        ["config", "lifeline.projection", "false"],
        ["commit", "-q", "--allow-empty", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=str(path), check=True, capture_output=True)
    return path


def measure(sizes: list, runs: int) -> None:
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="lifeline-bench-html-") as tmp:
            repo = _repo(Path(tmp) / "repo")
            browser.synthetic(repo, n)
            page = Path(tmp) / "page.html"
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "git_lifeline", "export", "--format", "html", "-o", str(page)],
                cwd=str(repo),
                check=True,
                capture_output=True,
            )
            export_s = time.perf_counter() - t0
            got = [browser.paint_timings(page) for _ in range(runs)]

            def med(key, got=got):
                vals = [
                    g["paint"].get(key) if key in ("first-paint", "first-contentful-paint") else g[key] for g in got
                ]
                vals = [v for v in vals if v is not None]
                return statistics.median(vals) if vals else float("nan")

            rows.append(
                (
                    n,
                    page.stat().st_size,
                    export_s,
                    med("first-paint"),
                    med("first-contentful-paint"),
                    med("dcl"),
                    med("load"),
                    med("timeline"),
                    got[0]["rows"],
                )
            )
            print(f"{n}: {got}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="lifeline-bench-html-") as tmp:
        tiny = Path(tmp) / "tiny.html"
        tiny.write_text("<!doctype html><title>t</title><p>one line of text</p>\n")
        base = [browser.paint_timings(tiny)["paint"].get("first-contentful-paint") for _ in range(runs)]
    print(
        f"baseline: a one-line page paints at {statistics.median(base):.0f} ms on this machine "
        f"(median of {runs} cold loads)\n"
    )
    print(
        "| entries | file size | export (s) | first paint (ms) | first contentful paint (ms) | "
        "DOMContentLoaded (ms) | load (ms) | timeline built (ms) | rows in the DOM |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, size, exp, fp, fcp, dcl, load, tl, dom_rows in rows:
        print(
            f"| {n:,} | {size / 1e6:.2f} MB | {exp:.2f} | {fp:.0f} | {fcp:.0f} | {dcl:.0f} | {load:.0f} | "
            f"{tl:.0f} | {dom_rows} |"
        )


def shoot(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="lifeline-shot-") as tmp:
        repo = _repo(Path(tmp) / "repo")
        subprocess.run(["git", "config", "user.name", "Ana Souza"], cwd=str(repo), check=True)
        subprocess.run(["git", "config", "user.email", "ana@example.com"], cwd=str(repo), check=True)
        browser.build_demo(repo, hostile=False)
        page = Path(tmp) / "page.html"
        subprocess.run(
            [sys.executable, "-m", "git_lifeline", "export", "--format", "html", "-o", str(page)],
            cwd=str(repo),
            check=True,
            capture_output=True,
        )
        browser.screenshot(page, out, width=1280, height=2750)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--sizes", default="1000,10000")
    m.add_argument("--runs", type=int, default=5)
    s = sub.add_parser("screenshot")
    s.add_argument("out", nargs="?", default=str(ROOT / "docs" / "view.png"))
    args = ap.parse_args()
    if args.what == "measure":
        measure([int(x) for x in args.sizes.split(",")], args.runs)
    else:
        shoot(Path(args.out))


if __name__ == "__main__":
    main()
