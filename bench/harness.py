"""Running and timing whole processes for the benchmarks: one place for how a figure is taken.

Every figure is one CLI process from start to exit (interpreter start included),
timed on the wall clock around `/usr/bin/time -f "%M %U %S"` (which also reports the
peak RSS), as the median of N runs. The CPU time (user + system of the process and the
children it waited for) is read from this process's `RUSAGE_CHILDREN` before and after the
run, to the microsecond: `/usr/bin/time` prints it to 10 ms, too coarse for a start-up of
~150 ms compared within 1.2x (its own few hundred microseconds are counted in). On a shared machine the CPU time is the steadier
figure; the wall time is the one the goals are stated in. A command that outlives its
timeout is killed with its whole process group and reported as such, never as a number.
"""

from __future__ import annotations

import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
TIME = "/usr/bin/time"


class Failed(RuntimeError):
    """A measured command exited non-zero: the bench stops rather than time an error."""


@dataclass
class Run:
    seconds: Optional[float]  # wall time; None when it timed out
    cpu: float = 0.0  # user + system seconds
    rss_kb: int = 0  # peak RSS
    out: str = ""  # its stdout
    err: str = ""  # its stderr


@dataclass
class Timing:
    seconds: Optional[float]  # median wall time; None when it timed out
    cpu: Optional[float] = None  # median CPU time (user + system)
    cpu_min: Optional[float] = None  # the least CPU time of the runs (the run least disturbed by the load)
    rss_kb: int = 0  # the largest peak RSS over the runs
    runs: tuple = ()  # every run's seconds
    timed_out: Optional[float] = None  # the timeout, when a run hit it

    def to_json(self) -> dict:
        out: dict = {
            "s": None if self.seconds is None else round(self.seconds, 4),
            "cpu_s": None if self.cpu is None else round(self.cpu, 4),
            "cpu_min_s": None if self.cpu_min is None else round(self.cpu_min, 4),
            "rss_kb": self.rss_kb,
            "runs": [round(t, 4) for t in self.runs],
        }
        if self.timed_out is not None:
            out["timed_out_after_s"] = self.timed_out
        return out


def run_once(cmd: list, cwd: Path, env: dict, timeout: Optional[float] = None, check: bool = True) -> Run:
    """One process, timed; a timeout kills it (and its children) and gives seconds=None."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(
        [TIME, "-f", "%M %U %S", *map(str, cmd)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # /usr/bin/time's child too
        proc.communicate()
        return Run(None)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and proc.returncode != 0:
        raise Failed(f"exit {proc.returncode}: {' '.join(map(str, cmd))}\n{out[-2000:]}{err[-2000:]}")
    lines = err.rstrip("\n").split("\n")
    fields = lines[-1].split() if lines else []
    if len(fields) == 3 and fields[0].isdigit():
        return Run(elapsed, cpu, int(fields[0]), out, "\n".join(lines[:-1]))
    return Run(elapsed, cpu, 0, out, err)


def measure(
    cmd: list,
    cwd: Path,
    env: dict,
    runs: int,
    before: Optional[Callable[[], None]] = None,
    timeout: Optional[float] = None,
) -> Timing:
    """Median of `runs` runs; `before` runs (untimed) ahead of each. A timeout ends the series."""
    return measure_many([cmd], cwd, env, runs, before, timeout)[0]


def measure_many(
    cmds: list,
    cwd: Path,
    env: dict,
    runs: int,
    before: Optional[Callable[[], None]] = None,
    timeout: Optional[float] = None,
) -> list:
    """Timings of several commands taken in turn (a, b, a, b, ...), so that a change of the
    machine's load hits all of them alike: their ratio is the figure to trust."""
    return measure_each([(cmd, cwd, env, before) for cmd in cmds], runs, timeout)


def measure_each(jobs: list, runs: int, timeout: Optional[float] = None) -> list:
    """`measure_many` for (cmd, cwd, env, before) jobs, each command with its own directory,
    environment and untimed step: their timings taken in turn. A timeout ends that job's series."""
    got: list = [[] for _ in jobs]
    dead: list = [False for _ in jobs]
    for _ in range(max(1, runs)):
        for k, (cmd, cwd, env, before) in enumerate(jobs):
            if dead[k]:
                continue
            if before:
                before()
            r = run_once(cmd, cwd, env, timeout)
            if r.seconds is None:
                dead[k] = True
            else:
                got[k].append(r)
    return [timing_of(got[k], dead[k], timeout) for k in range(len(jobs))]


def timing_of(rs: list, dead: bool, timeout: Optional[float]) -> Timing:
    """One command's Timing from its runs: medians of wall and CPU time, the least CPU, the
    largest RSS; a timeout (`dead`, or no run at all) is reported as one, never as a number."""
    if dead or not rs:
        return Timing(
            None, rss_kb=max((r.rss_kb for r in rs), default=0), runs=tuple(r.seconds for r in rs), timed_out=timeout
        )
    return Timing(
        statistics.median(r.seconds for r in rs),
        cpu=statistics.median(r.cpu for r in rs),
        cpu_min=min(r.cpu for r in rs),
        rss_kb=max(r.rss_kb for r in rs),
        runs=tuple(r.seconds for r in rs),
    )


def imported(src: Path, repo: Path, env: dict) -> Path:
    """`repo` made afresh with `src` (a LIFELINE.md) imported and packed (`git gc`), as a clone
    has it, the projection file off so that no figure includes its render."""
    git("init", "-q", str(repo), env=env)
    git("-C", repo, "config", "lifeline.projection", "false", env=env)
    run_once(ours("import", "--from", src), repo, env)
    git("-C", repo, "gc", "-q", env=env)
    return repo


def seed_python() -> str:
    py = os.environ.get("LIFELINE_SEED_PYTHON") or str(ROOT / ".venv-seed" / "bin" / "python")
    if not Path(py).exists():
        sys.exit("lifeline-context not found: set LIFELINE_SEED_PYTHON or run .ci/run once (it creates .venv-seed)")
    return py


def hermetic_env(tmp: Path) -> dict:
    """An environment that reads no user or system git config, with this checkout first on
    PYTHONPATH and a `git-lifeline` on PATH that runs it (hooks call `git lifeline`)."""
    env = dict(os.environ)
    cfg = tmp / "gitconfig"
    cfg.write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n")
    env.update(HOME=str(tmp), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C.UTF-8")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # Both tools run from bytecode, as an install leaves them (pip compiles lifeline-context's
    # when it installs it): with PYTHONDONTWRITEBYTECODE inherited, every one of our runs
    # compiled the package's ~100 modules again (tens of ms per process), theirs never.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "git_lifeline")],
        env=env,
        capture_output=True,
        check=False,
    )
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "git-lifeline"
    # what pip's console script does, with this interpreter
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom git_lifeline.cli import run\nsys.exit(run())\n")
    script.chmod(0o755)
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    return env


def seed_env(env: dict) -> dict:
    """The reference tool runs without our PYTHONPATH."""
    return {k: v for k, v in env.items() if k != "PYTHONPATH"}


def ours(*args) -> list:
    return [sys.executable, "-m", "git_lifeline", *args]


def theirs(db: Path, *args) -> list:
    return [seed_python(), "-m", "lifeline", "--db", str(db), *args]


def git(*args, cwd: Optional[Path] = None, env: Optional[dict] = None) -> str:
    return subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _first_line(cmd: list, **kw) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def load_average() -> list:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine() -> dict:
    """What the figures were taken on."""
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError):
        pass
    versions = _first_line(
        [
            sys.executable,
            "-c",
            "import importlib.metadata as m; print(' '.join("
            "f'{p} {m.version(p)}' for p in ('pygit2', 'pydantic', 'click')))",
        ]
    )
    seed_version = _first_line(
        [seed_python(), "-c", "import importlib.metadata as m; print(m.version('lifeline-context'))"]
    )
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    # the figures depend on the package, not on the bench's own commits
    code = _first_line(["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "git_lifeline"])
    dirty = _first_line(["sh", "-c", f"git -C '{ROOT}' status --porcelain -- git_lifeline | head -1"])
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "seed_python": _first_line([seed_python(), "-c", "import platform; print(platform.python_version())"]),
        "libraries": versions,
        "lifeline_context": seed_version,
        "git": _first_line(["git", "--version"]),
        "commit": commit + (" (with uncommitted changes in git_lifeline/)" if dirty not in ("", "?") else ""),
        "package_commit": code,
        "load_average_at_start": load_average(),
    }
