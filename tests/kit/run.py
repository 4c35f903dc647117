"""Shared test helpers: one piece of code per piece of logic.

Everything that runs git, runs the CLI, builds entries or takes a "was anything
written?" snapshot lives here, so each test states only what it proves.
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Optional, Union

import pygit2

from git_lifeline.app import exchange
from git_lifeline.app.draft import Draft
from git_lifeline.app.ledger import Ledger
from git_lifeline.app.workspace import Workspace
from git_lifeline.core.entry import KINDS, Entry, compute_id, format_ts, new_entry

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
AUTHOR_NAME = "Test Author"
AUTHOR_EMAIL = "test@example.com"
AUTHOR = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>"
BASE_TS = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
ENTRY_PATH_RE = re.compile(r"entries/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{60})")
# seconds one git or CLI run may take before the test fails instead of hanging the suite
TIMEOUT = 120

Arg = Union[str, bytes]


# ---- running things ---------------------------------------------------------
def subprocess_env(extra: Optional[dict] = None) -> dict:
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
    def of(cls, proc: subprocess.CompletedProcess) -> "GitOutput":
        made = cls(proc.stdout.decode("utf-8", "replace").strip())
        made.code = proc.returncode
        made.raw = proc.stdout
        made.out = proc.stdout.decode("utf-8", "replace")
        made.err = proc.stderr.decode("utf-8", "replace")
        return made


def git(
    cwd,
    *args: str,
    check: bool = True,
    input: Optional[bytes] = None,
    env: Optional[dict] = None,
    timeout: float = TIMEOUT,
) -> GitOutput:
    """Run the real git executable in `cwd` (`env` adds to this process's environment);
    fails the test when git exits non-zero unless `check=False`."""
    proc = subprocess.run(
        ["git", *args], cwd=str(cwd), capture_output=True, input=input, env=subprocess_env(env), timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr.decode('utf-8', 'replace')}"
        )
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


def _run_in_this_process(cwd, args: tuple) -> Result:
    import signal

    from git_lifeline.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    pipe = signal.getsignal(signal.SIGPIPE) if hasattr(signal, "SIGPIPE") else None
    code = 0
    old_cwd, old_argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = ["git-lifeline", *args]
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
    cwd,
    *args: Arg,
    input: Optional[bytes] = None,
    env: Optional[dict] = None,
    via: Via = Via.PYTHON,
    git_args: tuple = (),
    expect: Optional[int] = None,
    timeout: float = TIMEOUT,
    under: tuple = (),
) -> Result:
    """Run git-lifeline ARGS in `cwd` (argv may hold raw bytes; `env` adds to this process's
    environment; `git_args` go before `lifeline` with Via.GIT; `under` is a program the process
    runs under, e.g. sync_fixtures.read_only's mount namespace). With `expect`, fails the
    test unless it exits with that code. A traceback on stderr always fails it."""
    if via is Via.THIS_PROCESS:
        if input is not None or env is not None or git_args or under:
            raise ValueError("a run in this process takes no stdin, environment, git options or wrapper")
        res = _run_in_this_process(cwd, args)
    else:
        argv = ["git", *git_args, "lifeline"] if via is Via.GIT else _ENTRY_POINT[via]
        proc = subprocess.run(
            [*under, *argv, *args],
            cwd=str(cwd),
            input=input,
            capture_output=True,
            env=subprocess_env(env),
            timeout=timeout,
        )
        res = Result(proc.returncode, proc.stdout, proc.stderr)
    if expect is not None and res.code != expect:
        raise AssertionError(f"git-lifeline {args!r} exited {res.code} (wanted {expect}): {res!r}")
    assert "Traceback (most recent call last)" not in res.err, res
    return res


def write_dispatch_wrapper(bindir: Path) -> Path:
    """A `git-lifeline` executable that runs this checkout with this interpreter."""
    bindir.mkdir(parents=True, exist_ok=True)
    script = bindir / "git-lifeline"
    script.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m git_lifeline \"$@\"\n")
    script.chmod(0o755)
    return script


# ---- repositories -------------------------------------------------------------
def init_repo(path: Path, *flags: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", *flags)
    return path


def client(tmp_path: Path, name: str, url: Path) -> Path:
    """A fresh repository `tmp_path/name` whose `origin` is `url`."""
    repo = init_repo(tmp_path / name)
    git(repo, "remote", "add", "origin", str(url))
    return repo


def bare(tmp_path: Path, name: str = "server.git") -> Path:
    """A bare repository `tmp_path/name`: the team's remote."""
    path = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", str(path))
    return path


def configured_client(tmp_path: Path, name: str, url: Path) -> Path:
    """`client`, with its own author."""
    repo = client(tmp_path, name, url)
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "test@example.com")
    return repo


def log_decision(repo: Path, summary: str = "First decision", body: str = "Because.") -> None:
    """A human's decision, through the CLI."""
    r = cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", body)
    assert r.code == 0, r


def git_push(repo: Path, *specs: str, flags: tuple = (), remote: str = "origin", timeout: float = TIMEOUT) -> tuple:
    """A real `git push [FLAGS] REMOTE SPECS...` (running whatever hooks are installed,
    `git lifeline` found on PATH): (exit code, stderr)."""
    out = git(repo, "push", *flags, remote, *specs, check=False, timeout=timeout)
    return out.code, out.err


def ref(repo: Path, name: str) -> Optional[str]:
    """The object id `name` resolves to in `repo`, or None when it does not."""
    return git(repo, "rev-parse", "--verify", "-q", name, check=False) or None


def commit_file(repo: Path, name: str = "README", text: str = "hello\n") -> None:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")


def head(repo: Path, ref: str = "refs/lifeline/main") -> Optional[str]:
    out = git(repo, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
    return out or None


def open_workspace(repo: Path) -> Workspace:
    return Workspace.open(str(repo))


def open_ledger(repo: Path, line: Optional[str] = None) -> Ledger:
    return open_workspace(repo).ledger(line)


def snapshot(repo: Path, projection: Optional[Path] = None) -> dict:
    """What a write would change: every ref, every reachable object, the projection bytes."""
    proj = projection if projection is not None else repo / "LIFELINE.md"
    return {
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "objects": git(repo, "rev-list", "--objects", "--all"),
        "projection": proj.read_bytes() if proj.exists() else None,
    }


def odb_objects(repo: Path) -> set:
    """Every object in the object database, reachable or not (loose and packed)."""
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def odb_holds(repo: Path, needle: bytes) -> bool:
    """Whether any object in the object database contains `needle` (decompressed)."""
    proc = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=str(repo), capture_output=True, check=True
    )
    return needle in proc.stdout


def files_hold(root: Path, needle: bytes) -> list:
    """Files under `root` whose bytes contain `needle` (caches, locks, projections, logs)."""
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def stored_entry(**fields) -> Entry:
    """An entry as a blob read back from git would give it: no write-time secret scan
    (to build what an old client or a hand-made commit could have stored)."""
    doc = dict(
        kind="note",
        author=AUTHOR,
        agent="human",
        provider="none",
        model="human",
        summary="Stored as is",
        body="Written by hand.",
        parents=[],
        dedup_key=None,
        ts=format_ts(BASE_TS),
    )
    doc.update(fields)
    if isinstance(doc.get("ts"), datetime):
        doc["ts"] = format_ts(doc["ts"])
    # a stored blob carries every key and its recorded id
    doc.setdefault(
        "id",
        compute_id(*(doc[k] for k in ("kind", "author", "agent", "provider", "model", "summary", "body", "parents"))),
    )
    return Entry.from_json(json.dumps(doc).encode("utf-8"))


def entry_paths(repo: Path, ref: str = "refs/lifeline/main") -> list:
    out = git(repo, "ls-tree", "-r", "--name-only", ref)
    return out.splitlines() if out else []


# ---- entries --------------------------------------------------------------------
def ts_at(i: int) -> datetime:
    return BASE_TS + timedelta(minutes=i)


COLLISION_LIMIT = 300_000  # birthday bound for 24 bits is ~5,000 tries; this never runs out


def find_prefix_collision() -> tuple:
    """Two summaries whose decision ids (by AUTHOR, body "why") share their first MIN_PREFIX
    hex characters: (first summary, second summary, the shared prefix)."""
    from git_lifeline.core.entry import MIN_PREFIX, compute_id

    seen: dict = {}
    for i in range(COLLISION_LIMIT):
        summary = f"Collision probe {i}"
        prefix = compute_id("decision", AUTHOR, "human", "none", "human", summary, "why", [])[:MIN_PREFIX]
        if prefix in seen:
            return seen[prefix], summary, prefix
        seen[prefix] = summary
    raise AssertionError("no prefix collision found")


def make_entry(i: int = 0, **fields) -> Entry:
    """A valid entry; `i` varies summary and ts so entries are distinct and ordered."""
    values = dict(
        kind="decision", author=AUTHOR, summary=f"Decision number {i}", body=f"Because reason {i}.", ts=ts_at(i)
    )
    values.update(fields)
    return new_entry(**values)


def varied_entries(count: int = 40) -> list:
    """A ledger-like mix: every kind, unicode, multi-line bodies, parents, agents."""
    out: list = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        body = (
            f"Why {i}: the long reason — ünïcødé 漢字 🚀\nsecond line with `code`\n\n- a\n- b"
            if kind != "checkpoint"
            else f"thread: t{i % 3}\ngoal:\n  - finish part {i}\nnext:\n  - step {i}"
        )
        parents = [out[i - 1].id] if i and i % 4 == 0 else []
        agent = ("human", "none", "human") if i % 3 else ("coder", "anthropic", "claude")
        if kind == "correction" and out:
            parents = (
                [next(e.id for e in reversed(out) if e.kind == "decision")]
                if any(e.kind == "decision" for e in out)
                else parents
            )
        out.append(
            new_entry(
                kind=kind,
                author=AUTHOR,
                agent=agent[0],
                provider=agent[1],
                model=agent[2],
                summary=f"{kind.title()} item {i}: ça marche",
                body=body,
                parents=parents,
                ts=ts_at(i),
            )
        )
    return out


# ---- rewriting real git objects (tamper helpers) ----------------------------------
def flatten(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict:
    """{path: (oid, filemode)} for every blob under a tree."""
    out: dict = {}
    for item in tree:
        path = prefix + item.name
        if item.type_str == "tree":
            out.update(flatten(repo, repo[item.id], path + "/"))
        else:
            out[path] = (item.id, item.filemode)
    return out


def build_tree(repo: pygit2.Repository, files: dict) -> pygit2.Oid:
    """Write a nested tree from {path: (oid, mode)} (or {path: bytes} for new blobs)."""
    index = pygit2.Index()
    for path, value in sorted(files.items()):
        if isinstance(value, (bytes, str)):
            data = value.encode("utf-8") if isinstance(value, str) else value
            value = (repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        oid, mode = value
        index.add(pygit2.IndexEntry(path, oid, mode))
    return index.write_tree(repo)


def rewrite_line(repo_path: Path, transform: Callable[[int, dict], dict], ref: str = "refs/lifeline/main") -> str:
    """Re-create the commit chain of `ref`, passing each commit's files (oldest first,
    numbered from 0) through `transform`, then move the ref with real `git update-ref`
    (so the reflog records it). Untouched commits keep their ids. Returns the new head."""
    repo = pygit2.Repository(str(repo_path))
    tip = repo.references[ref].target
    commits = list(repo.walk(tip, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE))
    mapping: dict = {}
    for n, c in enumerate(commits):
        parents = [mapping.get(p, p) for p in c.parent_ids]
        tree = build_tree(repo, transform(n, flatten(repo, c.tree)))
        mapping[c.id] = repo.create_commit(None, c.author, c.committer, c.message, tree, parents)
    new_head = str(mapping[commits[-1].id])
    git(repo_path, "update-ref", "-m", "test: rewrite", ref, new_head)
    return new_head


def add_commit(repo_path: Path, transform: Callable[[dict], dict], ref: str = "refs/lifeline/main") -> str:
    """Put one more commit on `ref` whose files are transform(files of the head)."""
    repo = pygit2.Repository(str(repo_path))
    tip = repo[repo.references[ref].target]
    tree = build_tree(repo, transform(flatten(repo, tip.tree)))
    sig = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, 1714560000, 0)
    new = repo.create_commit(None, sig, sig, "test: extra commit\n", tree, [tip.id])
    git(repo_path, "update-ref", "-m", "test: add commit", ref, str(new))
    return str(new)


def path_of(entry_id: str) -> str:
    return f"entries/{entry_id[:2]}/{entry_id[2:4]}/{entry_id[4:]}"


# ---- concurrent writers -----------------------------------------------------------
APPEND_WORKER = """
import os, sys, time
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
repo, worker, count, gate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
led = Workspace.open(repo).ledger()
while not os.path.exists(gate):
    time.sleep(0.002)
for i in range(count):
    led.log(Draft(kind="note", summary=f"worker {worker} note {i}", body=f"written by process {worker}"))
"""


def append_concurrently(repo: Path, processes: int, each: int) -> list:
    """Start `processes` real processes that append `each` entries at the same moment."""
    gate = repo.parent / f"gate-{processes}-{each}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPEND_WORKER, str(repo), str(w), str(each), str(gate)],
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for w in range(processes)
    ]
    gate.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        results.append((p.returncode, err.decode("utf-8", "replace")))
    return results


# ---- hypothesis: random valid entries ---------------------------------------------
# Body lines that have broken markdown projections before: our own markers, fences,
# headings, front-matter rules and the seed's end sentinel.
TRICKY_LINES = (
    "---",
    "```",
    "````",
    "```text",
    "~~~",
    "### decision: not an entry",
    "## Heading",
    "- id: " + "a" * 64,
    "- ts: 2024-01-01T00:00:00.000000Z",
    "<!-- lifeline:end -->",
    "<!-- lifeline:tree none entries 0 -->",
    "<!-- git-lifeline projection v1 line main",
    "\r",
    "line with CRLF\r",
    "    indented code",
    "",
    "\t",
    " -->",
)


def entry_strategy():
    from hypothesis import strategies as st

    line_chars = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
    one_line = st.text(line_chars, min_size=1, max_size=30).map(str.strip).filter(bool)
    body_chars = st.characters(blacklist_categories=("Cc", "Cs"), whitelist_characters="\t\r")
    body_line = st.one_of(st.sampled_from(TRICKY_LINES), st.text(body_chars, max_size=30))
    body = st.lists(body_line, max_size=6).map("\n".join)
    hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)

    @st.composite
    def entries(draw):
        kind = draw(st.sampled_from(KINDS))
        text = draw(body)
        if kind != "checkpoint" and not text.strip():
            text = "why: " + text
        return new_entry(
            kind=kind,
            author=draw(one_line),
            agent=draw(one_line),
            provider=draw(one_line),
            model=draw(one_line),
            summary=draw(one_line),
            body=text,
            parents=draw(st.lists(hex64, max_size=3, unique=True)),
            dedup_key=draw(st.none() | one_line),
            ts=draw(
                st.datetimes(
                    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(timezone.utc)
                )
            ),
        )

    return entries()


# ---- whole-ledger checks after faults -------------------------------------------------
def cache_state_key(cache, head: Optional[str]) -> tuple:
    """What a line's cache answers: the entry rows, the broken ones, the fold, a recall."""
    from git_lifeline.views import recall_answer

    good, broken = cache.entries(head)
    fold = cache.state(head).fold.to_json()
    hits = [h.id for h in recall_answer.answer(cache.ensure(head), "note decision", k=5).hits]
    return [r.id for r in good], sorted(broken), fold, hits


def assert_cache_heals(repo: Path, line: str = "main") -> None:
    """The cache under <git common dir>/lifeline/ (whatever state a fault left it in)
    answers exactly what a cache rebuilt from scratch answers."""
    import tempfile

    from git_lifeline.views.cache import LineCache

    led = open_ledger(repo, line)
    head = led.head()
    live = LineCache(led.store)
    fresh = LineCache(led.store)
    with tempfile.TemporaryDirectory() as tmp:
        fresh.path = Path(tmp) / "fresh.sqlite3"
        try:
            assert cache_state_key(live, head) == cache_state_key(fresh, head)
        finally:
            live.close()
            fresh.close()


def assert_ledger_whole(repo: Path, line: str = "main") -> Optional[str]:
    """After any fault: the ref names a complete commit (every object of its history
    readable), verify passes, the projection (if any) parses and holds only entries of
    the ref, and the cache heals. Returns the head."""
    from git_lifeline.git.verify import verify_line
    from git_lifeline.views import projection

    led = open_ledger(repo, line)
    head = led.head()
    if head is not None:
        git(repo, "fsck", "--connectivity-only", "--no-dangling", "--no-progress", f"refs/lifeline/{line}")
        report = verify_line(led.store)
        assert report.ok, report.problems
    ids = {e.id for e in led.entries()}
    path = led.projection_path()
    if path is not None and path.exists():
        parsed = projection.parse(path.read_text(encoding="utf-8"), str(path))
        assert {e.id for e in parsed} <= ids, "the projection shows an entry the ref does not hold"
    assert_cache_heals(repo, line)
    return head


# ---- processes killed at random points ----------------------------------------------------
# A zygote imports git-lifeline once and forks a fresh process per trial, so a trial costs a
# fork, not an interpreter start. Each child opens the repository itself, says it is ready,
# runs its workload until it ends or is killed; the zygote reaps it when told.
ZYGOTE = r"""
import json, os, sys, time
from pathlib import Path
import git_lifeline.core.seed, git_lifeline.views.projection, git_lifeline.views.cache  # warm
from git_lifeline.app import exchange, interop
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace

def workload(cmd):
    ws = Workspace.open(cmd["repo"])
    led = ws.ledger(cmd.get("line"))
    kind = cmd["workload"]
    yield
    if kind == "append":
        for i in range(cmd.get("count", 10**6)):
            led.log(Draft(kind="note", summary=f"{cmd['tag']} note {i}", body=f"appended by {cmd['tag']}"))
    elif kind == "import":
        interop.import_from(led, Path(cmd["source"]))
    elif kind == "pull":
        exchange.pull(ws, cmd["remote"])
    else:
        raise SystemExit(f"unknown workload {kind}")

for raw in sys.stdin:
    cmd = json.loads(raw)
    if cmd.get("reap"):
        _, status = os.waitpid(cmd["reap"], 0)
        print(json.dumps({"status": status}), flush=True)
        continue
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        code = 0
        try:
            steps = workload(cmd)
            next(steps)
            os.write(w, b"r")
            for _ in steps:
                pass
        except BaseException:
            code = 1
        os._exit(code)
    os.close(w)
    ready = os.read(r, 1)
    os.close(r)
    print(json.dumps({"pid": pid, "ready": ready == b"r"}), flush=True)
"""


class Zygote:
    """Forks workload processes (append, import, pull) that a test kills with SIGKILL."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=subprocess_env(),
            text=True,
        )

    def _ask(self, cmd: dict) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("the zygote died")
        return json.loads(line)

    def start(self, workload: str, repo: Path, **args) -> int:
        answer = self._ask(dict(workload=workload, repo=str(repo), **args))
        assert answer["ready"], "the workload process failed before it started"
        return answer["pid"]

    def kill(self, pid: int) -> str:
        """SIGKILL the workload; 'killed' if it was still running, else how it had ended."""
        import signal

        os.kill(pid, signal.SIGKILL)
        status = self._ask({"reap": pid})["status"]
        if os.WIFSIGNALED(status):
            return "killed"
        return "completed" if os.WEXITSTATUS(status) == 0 else "failed"

    def wait(self, pid: int) -> str:
        """Let the workload run to its end: 'completed' or 'failed'."""
        status = self._ask({"reap": pid})["status"]
        return "completed" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else "failed"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ---- disk faults ----------------------------------------------------------------------------
def _run_quiet(*argv: str) -> bool:
    return subprocess.run(list(argv), capture_output=True).returncode == 0


class Unavailable(Exception):
    """The environment cannot stage this fault (the test skips, saying why)."""


def staged(fault):
    """Enter a fault context, skipping (with its reason) where the environment cannot stage
    it; (what it yields, the context: exit it when done)."""
    import pytest

    try:
        return fault.__enter__(), fault
    except Unavailable as exc:
        pytest.skip(str(exc))


from contextlib import contextmanager  # noqa: E402


@contextmanager
def read_only(path: Path):
    """`path` read-only for this process. As root (whom permission bits do not stop) by a
    read-only bind mount; otherwise by removing write permission everywhere under it."""
    if os.geteuid() == 0:
        if not _run_quiet("mount", "--bind", str(path), str(path)):
            raise Unavailable("mounting is not permitted here (a read-only bind mount needs it as root)")
        if not _run_quiet("mount", "-o", "remount,bind,ro", str(path), str(path)):
            _run_quiet("umount", str(path))
            raise Unavailable("remounting read-only is not permitted here")
        try:
            yield
        finally:
            _run_quiet("umount", str(path))
        return
    modes = {}
    for p in [path, *path.rglob("*")]:
        modes[p] = p.stat().st_mode
        p.chmod(modes[p] & ~0o222)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


@contextmanager
def small_disk(path: Path, size: str = "4m"):
    """A tmpfs of `size` mounted at `path` (needs root and permission to mount)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        raise Unavailable("mounting a small tmpfs needs root")
    if not _run_quiet("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)):
        raise Unavailable("mounting a tmpfs is not permitted here")
    try:
        yield path
    finally:
        _run_quiet("umount", "-l", str(path))


def fill_disk(mount: Path, leave_bytes: int) -> Path:
    """Fill the file system of `mount` until `leave_bytes` remain free; returns the filler."""
    st = os.statvfs(str(mount))
    free = st.f_bavail * st.f_frsize
    filler = mount / "filler"
    todo = max(0, free - leave_bytes)
    with open(filler, "wb", buffering=0) as f:
        try:
            while todo > 0:
                n = min(todo, 1 << 20)
                f.write(b"\0" * n)
                todo -= n
        except OSError:  # the file system rounds to blocks: it may be full a little earlier
            pass
    return filler


# ---- pulls racing appends -------------------------------------------------------------------
PULL_WORKER = """
import os, sys, time
from git_lifeline.app import exchange
from git_lifeline.app.workspace import Workspace
repo, stop = sys.argv[1], sys.argv[2]
pulls = merges = 0
while not os.path.exists(stop):
    lines = exchange.pull(Workspace.open(repo), "origin").lines
    pulls += 1
    merges += sum(1 for pl in lines if pl.action == "merged")
    time.sleep(0.1)  # a busy user's pace, not a fetch storm (each pull runs git fetch)
print(pulls, merges)
"""

REMOTE_WRITER = """
import sys
from git_lifeline.app import exchange
from git_lifeline.app.draft import Draft
from git_lifeline.app.workspace import Workspace
clone, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    ws = Workspace.open(clone)
    ws.ledger().log(Draft(kind="note", summary=f"remote note {i}", body="written on another clone"))
    exchange.sync_with(ws, "origin")
"""


def start_script(script: str, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish_script(proc: subprocess.Popen, timeout: int = 300) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode("utf-8", "replace")
    return out.decode("utf-8", "replace")


def remote_and_clones(base: Path, names=("a", "b")) -> tuple:
    """A bare remote holding one ledger entry, and clones of it that pulled the ledger."""
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", str(remote))
    clones = []
    for name in names:
        clone = base / name
        git(base, "clone", "-q", str(remote), str(clone))
        clones.append(clone)
    first = Workspace.open(str(clones[0]))
    first.ledger().log(Draft(kind="bootstrap", summary="Shared project", body="the remote's first entry"))
    exchange.sync_with(first, "origin")
    for clone in clones[1:]:
        exchange.pull(Workspace.open(str(clone)), "origin")
    return (remote, *clones)
