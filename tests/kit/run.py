"""The one way a test runs git (`git`), the one way it runs git-lifeline (`cli`), and the
one way it starts a Python script of its own (`start_script`), under one timeout policy:
every process a test starts ends within TIMEOUT seconds or fails the test.
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional, Union

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
# seconds one git, CLI or helper-script run may take before the test fails instead of hanging the suite
TIMEOUT = 120
# seconds a long helper script (a writer racing others, a server's whole life) may take
LONG_TIMEOUT = 300

Arg = Union[str, bytes]
Where = Union[str, "os.PathLike[str]"]
Env = Mapping[str, str]
# a JSON document as a test writes it
JSONValue = Union[str, int, float, bool, None, Sequence["JSONValue"], Mapping[str, "JSONValue"]]


def subprocess_env(extra: Optional[Env] = None) -> dict[str, str]:
    """This process's environment with this checkout first on PYTHONPATH, plus `extra`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


class GitOutput(str):
    """What git printed on stdout, as stripped text (what most callers compare), with the
    exit code, stderr and the exact stdout for the tests that check how git refused."""

    code: int
    out: str
    err: str
    raw: bytes

    @classmethod
    def of(cls, proc: subprocess.CompletedProcess[bytes]) -> GitOutput:
        made = cls(proc.stdout.decode("utf-8", "replace").strip())
        made.code = proc.returncode
        made.raw = proc.stdout
        made.out = proc.stdout.decode("utf-8", "replace")
        made.err = proc.stderr.decode("utf-8", "replace")
        return made


def git(
    cwd: Where,
    *args: Arg,
    check: bool = True,
    input: Optional[bytes] = None,
    env: Optional[Env] = None,
    timeout: float = TIMEOUT,
) -> GitOutput:
    """Run the real git executable in `cwd` (argv may hold raw bytes; `env` adds to this
    process's environment); fails the test when git exits non-zero unless `check=False`."""
    proc = subprocess.run(
        ["git", *args], cwd=str(cwd), capture_output=True, input=input, env=subprocess_env(env), timeout=timeout
    )
    if check and proc.returncode != 0:
        shown = " ".join(a if isinstance(a, str) else repr(a) for a in args)
        raise AssertionError(f"git {shown} failed ({proc.returncode}): {proc.stderr.decode('utf-8', 'replace')}")
    return GitOutput.of(proc)


class Result:
    """A finished CLI run: exit code, stdout and stderr decoded, stdout's exact bytes."""

    def __init__(self, code: int, raw: bytes, err: bytes):
        self.code = code
        self.raw = raw
        self.out = raw.decode("utf-8", "replace")
        self.err = err.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return f"<exit {self.code}\nstdout: {self.out[-2000:]}\nstderr: {self.err[-2000:]}>"


class Via(enum.Enum):
    """How a test reaches the CLI."""

    PYTHON = "python -m git_lifeline"  # a real process, as an installed entry point runs
    GIT = "git lifeline"  # through git's dispatch: a git-lifeline on PATH (git_dispatch, gitenv)
    # `cli.run` in this process: the same exit code and streams without an interpreter start,
    # for tests that make many calls where the process boundary is not what they check
    THIS_PROCESS = "git_lifeline.cli.main.run"
    # as the installed console script starts: no current directory on sys.path
    INSTALLED = "git-lifeline"


# what the installed console script runs; sys.path[:1] = [] drops the '' python -c puts first
_AS_INSTALLED = (
    "import sys; sys.path[:1] = []; sys.argv[0] = 'git-lifeline'; from git_lifeline.cli.main import run; run()"
)
_ENTRY_POINT = {
    Via.PYTHON: [sys.executable, "-m", "git_lifeline"],
    Via.INSTALLED: [sys.executable, "-c", _AS_INSTALLED],
}


def _run_in_this_process(cwd: Where, args: tuple[Arg, ...]) -> Result:
    from git_lifeline.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    pipe = signal.getsignal(signal.SIGPIPE) if hasattr(signal, "SIGPIPE") else None
    code = 0
    old_cwd, old_argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = ["git-lifeline", *(a if isinstance(a, str) else os.fsdecode(a) for a in args)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                run()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(old_cwd)
        sys.argv = old_argv
        if pipe is not None:
            signal.signal(signal.SIGPIPE, pipe)
    return Result(code, out.getvalue().encode(), err.getvalue().encode())


def cli(
    cwd: Where,
    *args: Arg,
    input: Optional[bytes] = None,
    env: Optional[Env] = None,
    via: Via = Via.PYTHON,
    git_args: tuple[str, ...] = (),
    expect: Optional[int] = None,
    timeout: float = TIMEOUT,
    under: tuple[str, ...] = (),
) -> Result:
    """Run git-lifeline ARGS in `cwd` (argv may hold raw bytes; `env` adds to this process's
    environment; `git_args` go before `lifeline` with Via.GIT; `under` is a program the process
    runs under, e.g. kit.faults.read_only_argv's mount namespace). With `expect`, fails the
    test unless it exits with that code. A traceback on stderr always fails it."""
    if via is Via.THIS_PROCESS:
        if input is not None or env is not None or git_args or under:
            raise ValueError("a run in this process takes no stdin, environment, git options or wrapper")
        res = _run_in_this_process(cwd, args)
    else:
        argv: list[Arg] = [*under, *(["git", *git_args, "lifeline"] if via is Via.GIT else _ENTRY_POINT[via]), *args]
        proc = subprocess.run(
            argv, cwd=str(cwd), input=input, capture_output=True, env=subprocess_env(env), timeout=timeout
        )
        res = Result(proc.returncode, proc.stdout, proc.stderr)
    if expect is not None and res.code != expect:
        raise AssertionError(f"git-lifeline {args!r} exited {res.code} (wanted {expect}): {res!r}")
    assert "Traceback (most recent call last)" not in res.err, res
    return res


def write_dispatch_wrapper(bindir: Path) -> Path:
    """A `git-lifeline` executable that runs this checkout with this interpreter, started
    as the installed console script starts (its own folder first on sys.path, never the
    current directory)."""
    bindir.mkdir(parents=True, exist_ok=True)
    script = bindir / "git-lifeline"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from git_lifeline.cli.main import run\nrun()\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def start_script(script: str, *args: str | os.PathLike[str] | int) -> subprocess.Popen[bytes]:
    """`python -c SCRIPT ARGS...` with this checkout importable, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish_script(proc: subprocess.Popen[bytes], timeout: float = LONG_TIMEOUT) -> str:
    """Wait (bounded) for a script of `start_script`; fails the test unless it exited 0."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode("utf-8", "replace")
    return out.decode("utf-8", "replace")


def run_as_client(command: str, cwd: Where, payload: Mapping[str, JSONValue]) -> subprocess.CompletedProcess[bytes]:
    """A command an agent client runs (a hook): through a shell, the event's JSON on stdin,
    and no PYTHONPATH (a client passes none)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        ["sh", "-c", command],
        cwd=str(cwd),
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
    )
