"""Secret detection: our rules (git_lifeline.core.secrets) against detect-secrets, by measurement.

Three numbers per detector, on the two committed corpora (tests/data/secrets):
  * detection: credential cases found (a case counts when any finding is reported);
  * false positives: realistic ledger entries flagged;
  * time per entry (CPU, mean over the false-positive corpus, best of --repeat runs).

detect-secrets is optional (pip install detect-secrets); it is run two ways:
  * `scan_line` on every line (its ad-hoc string API, eager keyword search), and
  * `SecretsCollection.scan_file` on each entry written to a .md file (its normal mode).

Usage: python bench/bench_secrets.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kit.secrets import credential_cases, ledger_entries  # noqa: E402

from git_lifeline.core import secrets  # noqa: E402


def ours(text: str) -> list:
    return [f.rule for f in secrets.scan(text)]


def detect_secrets_line_scanner():
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def scan(text: str) -> list:
        with default_settings():
            return [s.type for line in text.splitlines() for s in scan_line(line)]

    return scan


def detect_secrets_file_scanner(tmp: Path):
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    path = tmp / "entry.md"

    def scan(text: str) -> list:
        path.write_text(text, encoding="utf-8")
        with default_settings():
            col = SecretsCollection()
            col.scan_file(str(path))
            return [s.type for _, s in col]

    return scan


def measure(name: str, scan, repeat: int) -> dict:
    cases = credential_cases()
    entries = ledger_entries()
    missed = [cid for cid, _fmt, _field, text in cases if not scan(text)]
    flagged = [(e["source"], e["summary"][:70], scan(e["summary"] + "\n" + e["body"])) for e in entries]
    flagged = [f for f in flagged if f[2]]
    texts = [e["summary"] + "\n" + e["body"] for e in entries]
    best = None
    for _ in range(repeat):  # CPU time, best of `repeat`: other load on the machine does not count
        t0 = time.process_time()
        for t in texts:
            scan(t)
        dt = (time.process_time() - t0) / len(texts)
        best = dt if best is None else min(best, dt)
    formats = {fmt for _cid, fmt, _f, _t in cases}
    missed_formats = {cid.split("-", 1)[1] for cid in missed}
    return {
        "name": name,
        "cases": len(cases),
        "formats": len(formats),
        "found": len(cases) - len(missed),
        "missed": missed,
        "missed_formats": sorted(missed_formats),
        "entries": len(entries),
        "fp": len(flagged),
        "flagged": flagged,
        "us_per_entry": best * 1e6,
    }


def report(r: dict) -> None:
    print(
        f"{r['name']}: detection {r['found']}/{r['cases']} cases "
        f"({r['formats'] - len(r['missed_formats'])}/{r['formats']} formats), "
        f"false positives {r['fp']}/{r['entries']} ({100 * r['fp'] / r['entries']:.1f}%), "
        f"{r['us_per_entry']:.0f} us/entry"
    )
    for m in r["missed"]:
        print(f"    missed  {m}")
    for source, summary, kinds in r["flagged"]:
        print(f"    flagged [{source}] {summary!r}: {sorted(set(kinds))}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quiet", action="store_true", help="no per-case lines")
    args = ap.parse_args()
    results = [measure("git_lifeline.core.secrets", ours, args.repeat)]
    import importlib.util

    if importlib.util.find_spec("detect_secrets") is None:
        print("detect-secrets is not installed: measuring our rules only", file=sys.stderr)
    else:
        results.append(measure("detect-secrets scan_line", detect_secrets_line_scanner(), args.repeat))
        with tempfile.TemporaryDirectory() as tmp:
            results.append(measure("detect-secrets scan_file", detect_secrets_file_scanner(Path(tmp)), args.repeat))
    for r in results:
        if args.quiet:
            r = dict(r, missed=[], flagged=[])
        report(r)


if __name__ == "__main__":
    main()
