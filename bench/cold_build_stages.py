"""Where a cold cache build spends its time and memory: `git lifeline context` run in this
process on a repository whose cache is deleted first, with the CPU time, wall time and
peak RSS (VmHWM, Linux) printed at the end of each stage of the build.

    python bench/cold_build_stages.py /tmp/cold/repo-100000     # a repo bench_cold_cache.py made

Stages: imports; every blob read, parsed and its row inserted; folded (and the search index
rebuilt beside it); the correction graph derived; the fold's text made; sealed and stored;
the context rendered. The hooks wrap module functions for this process only.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

T0, C0 = time.perf_counter(), time.process_time()


def peak_rss_mb() -> str:
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS", "VmHWM")))
    except OSError:
        return "n/a"
    return f"rss {int(fields['VmRSS'].split()[0]) // 1024} MB, peak {int(fields['VmHWM'].split()[0]) // 1024} MB"


def mark(stage: str) -> None:
    print(
        f"{stage:34s} wall {time.perf_counter() - T0:6.2f} s  cpu {time.process_time() - C0:6.2f} s  {peak_rss_mb()}",
        file=sys.stderr,
        flush=True,
    )


def main() -> None:
    repo = Path(sys.argv[1]).resolve()
    os.chdir(repo)
    shutil.rmtree(repo / ".git" / "lifeline", ignore_errors=True)
    from git_lifeline.cli.main import run
    from git_lifeline.core import fold_text, truth
    from git_lifeline.views import cache_check, cache_rows

    mark("imports")

    def hook(owner, name: str, before: str = "", after: str = ""):
        original = getattr(owner, name)

        def wrapped(*args, **kwargs):
            if before:
                mark(before)
            out = original(*args, **kwargs)
            if after:
                mark(after)
            return out

        setattr(owner, name, wrapped)

    hook(cache_rows, "fold_slims", before="read, parsed, rows inserted", after="folded (index rebuilt beside)")
    derived = truth.Fold.derived

    def timed_derived(self):
        fresh = self._derived is None
        out = derived.fget(self)
        if fresh:
            mark("derived")
        return out

    truth.Fold.derived = property(timed_derived)  # type: ignore[method-assign, assignment]
    hook(fold_text, "text_of", after="fold text made")
    hook(cache_check, "write_seal", after="sealed and stored")
    sys.argv = ["git-lifeline", "context"]
    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
        run()
    mark("context rendered")


if __name__ == "__main__":
    main()
