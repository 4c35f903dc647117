"""The counts of docs/RELIABILITY.md: run the corpus tests and sum what each one tried,
what held and what was lost.

Each corpus test reports through the `record_counts` fixture (tests/conftest.py) when
LIFELINE_COUNTS names a file; this script sets it, runs the files, and prints one
markdown row per corpus plus the wall time of the run.

Usage: python bench/reliability_counts.py [--python PY] [pytest args...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [
    "tests/security/test_secrets_never_enter_the_ledger.py",
    "tests/reliability/test_concurrent_writers_lose_nothing.py",
    "tests/reliability/test_crash_at_any_point_leaves_a_whole_ledger.py",
    "tests/reliability/test_disk_and_repo_faults_leave_nothing_half_written.py",
    "tests/security/test_tampering_is_detected_refused_and_rejected.py",
    "tests/reliability/test_bad_input_is_refused_and_writes_nothing.py",
    "tests/core/test_validation.py",
    "tests/reliability/test_fuzz_ingest_never_crashes.py",
    "tests/security/test_ledger_commits_are_signed_when_git_asks.py",
    "tests/security/test_a_header_value_never_reaches_git_as_an_option.py",
    "tests/security/test_time_cannot_be_rewritten_or_borrowed.py",
    "tests/app/test_only_a_human_rechecks_a_stale_decision.py",
    "tests/security/test_lifeline_md_cannot_fake_ids_or_marks.py",
    "tests/security/test_hostile_worktree_files_are_never_followed_or_read_unbounded.py",
    "tests/security/test_sizes_are_checked_before_anything_is_parsed.py",
    "tests/sync/test_sync_under_three_clone_contention_never_gives_up.py",
    "tests/sync/test_one_bad_line_on_a_hookless_remote_leaves_the_others_pullable.py",
    "tests/reliability/test_lifeline_md_is_generated_ignored_bounded_and_per_umask.py",
    "tests/reliability/test_a_corrupt_cache_is_rebuilt_never_served.py",
    "tests/reliability/test_reads_work_on_a_read_only_repository.py",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    args, extra = ap.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "counts.jsonl"
        env = dict(os.environ, LIFELINE_COUNTS=str(counts))
        t0 = time.perf_counter()
        proc = subprocess.run(
            [args.python, "-m", "pytest", "-p", "no:cacheprovider", *CORPORA, *extra], cwd=str(ROOT), env=env
        )
        wall = time.perf_counter() - t0
        totals: dict = {}
        for line in counts.read_text(encoding="utf-8").splitlines() if counts.exists() else []:
            row = json.loads(line)
            agg = totals.setdefault(row.pop("corpus"), {})
            for k, v in row.items():
                if isinstance(v, (int, float)):
                    agg[k] = agg.get(k, 0) + v
    print("| corpus | tried | held | lost | details |")
    print("|---|---:|---:|---:|---|")
    for name, agg in sorted(totals.items()):
        details = ", ".join(f"{k} {v}" for k, v in sorted(agg.items()) if k not in ("tried", "held", "lost"))
        print(f"| {name} | {agg.get('tried', 0)} | {agg.get('held', 0)} | {agg.get('lost', 0)} | {details} |")
    print(f"\npytest exit {proc.returncode}, {wall:.0f} s wall for {len(CORPORA)} files")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
