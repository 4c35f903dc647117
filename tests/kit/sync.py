"""Fixtures of the sync and hook tests: hermetic git with a `git-lifeline` on PATH that
runs this checkout, remotes and clones, a real `git daemon` on 127.0.0.1, and a way to
tamper with a ledger the way an attacker (or a bug) would. Git and the CLI run through
helpers.git and helpers.cli.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from kit.run import ROOT, git

WAIT_SECONDS = 15
_MOUNT_READ_ONLY = 'mount --bind -o ro "$0" "$0" && exec "$@"'
_CHMOD_READ_ONLY = 'chmod -R a-w "$0" && "$@"; code=$?; chmod -R u+w "$0"; exit $code'


def read_only(path: Path) -> tuple:
    """The argv prefix that runs a program with `path` read-only: on a read-only mount in its own
    mount namespace (the test's view stays writable; chmod does not stop root, a read-only mount
    does), else, for a user other than root, with its write bits off for the run. Skips only as
    root where no mount namespace may be made."""
    attempts = [("unshare", "-m"), ("unshare", "-r", "-m")] if os.geteuid() == 0 else [("unshare", "-r", "-m")]
    probe = path / ".read-only-probe"
    for unshare in attempts:
        prefix = (*unshare, "sh", "-c", _MOUNT_READ_ONLY, str(path))
        try:
            r = subprocess.run([*prefix, "sh", "-c", f"! touch '{probe}' 2>/dev/null"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and not probe.exists():
            return prefix
    if os.geteuid() != 0:
        return ("sh", "-c", _CHMOD_READ_ONLY, str(path))
    pytest.skip("running as root, where chmod does not stop writes, and no mount namespace may be made here")


@pytest.fixture
def gitenv(tmp_path, monkeypatch):
    """Hermetic git config and a git-lifeline executable that runs this checkout."""
    home = tmp_path / "home"
    home.mkdir()
    cfg = home / "gitconfig"
    cfg.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        '[protocol "file"]\n\tallow = always\n',
        encoding="utf-8",
    )
    bindir = home / "bin"
    bindir.mkdir()
    exe = bindir / "git-lifeline"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from git_lifeline.cli.main import run\nrun()\n",
        encoding="utf-8",
    )
    exe.chmod(0o755)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("GIT_LIFELINE_NO_GC", "1")
    for var in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "PRE_COMMIT_REMOTE_NAME",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_remote(path: Path) -> Path:
    git(path.parent, "init", "--quiet", "--bare", path.name)
    return path


def make_clone(url: str, path: Path, code: bool = False) -> Path:
    git(path.parent, "clone", "--quiet", url, path.name)
    if code:
        (path / "README").write_text("hello\n", encoding="utf-8")
        git(path, "add", "README")
        old = "2020-01-01T00:00:00Z"  # well before any entry a test records
        git(
            path,
            "commit",
            "--quiet",
            "-m",
            "initial",
            env=dict(os.environ, GIT_COMMITTER_DATE=old, GIT_AUTHOR_DATE=old),
        )
    return path


def entry_blobs(path, line="main") -> dict:
    """{entry id: blob oid} of a line."""
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.store import LineStore

    store = LineStore(open_repo(str(path)), line)
    return {pid: str(obj.id) for _p, pid, obj in store.iter_blobs()}


def tamper(path, entry_id: str, line: str = "main", summary: str = "tampered") -> str:
    """Append a commit that rewrites an entry's content in place (keeping its id)."""
    from git_lifeline.git.repo import open_repo
    from git_lifeline.git.store import LineStore

    store = LineStore(open_repo(str(path)), line)
    head = store.head()
    doc = store.read(entry_id).to_json().replace(b'"summary":"', f'"summary":"{summary} '.encode(), 1)
    blob = store.repo.create_blob(doc)
    tree = store.root_tree(store.insert(store.tree(head), {entry_id: blob}))
    sig = pygit2.Signature("Mallory", "m@example.com")
    commit = store.repo.create_commit(None, sig, sig, "innocent", tree, [pygit2.Oid(hex=head)])
    assert store.move_ref(head, str(commit), "tamper")
    return str(commit)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def git_daemon(base: Path):
    """A real `git daemon` serving `base` (push enabled) on 127.0.0.1; killed at exit."""
    port = free_port()
    log = open(base.parent / f"daemon-{port}.log", "wb")
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--informative-errors",
            str(base),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"git daemon exited with {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("git daemon did not start listening in time") from None
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=WAIT_SECONDS)
        log.close()
