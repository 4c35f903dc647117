"""Repositories, remotes, clones and commits, made with the real git executable, and the
"was anything written?" views of them (refs, objects, the projection's bytes)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional, Union

import pytest

from git_lifeline.app import exchange
from git_lifeline.app.draft import Draft
from git_lifeline.app.hook_files import install
from git_lifeline.app.ledger import Ledger
from git_lifeline.app.workspace import Workspace
from git_lifeline.git.repo import open_repo
from kit.home import AUTHOR_EMAIL, AUTHOR_NAME
from kit.run import TIMEOUT, Arg, Result, Via, cli, git

# a policy document as a test writes it: JSON values, or text taken as it is (to test bad ones)
PolicyValue = Union[str, int, bool, None, Sequence["PolicyValue"], Mapping[str, "PolicyValue"]]
Policy = Union[str, Mapping[str, PolicyValue]]
# what a write would change (see `snapshot`)
Snapshot = dict[str, Union[str, bytes, None]]


def init_repo(path: Path, *flags: str) -> Path:
    """`git init -q FLAGS path` (`--bare` for a remote); the folder is made as needed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", *flags)
    return path


def bare(tmp_path: Path, name: str = "server.git", hook: bool = False) -> Path:
    """A bare repository `tmp_path/name`: the team's remote (with `hook`, one whose
    pre-receive runs `git lifeline` from PATH)."""
    path = init_repo(tmp_path / name, "--bare")
    if hook:
        install(open_repo(str(path)), ["pre-receive"])
    return path


def client(tmp_path: Path, name: str, url: Path) -> Path:
    """A fresh repository `tmp_path/name` whose `origin` is `url`."""
    repo = init_repo(tmp_path / name)
    git(repo, "remote", "add", "origin", str(url))
    return repo


def configured_client(tmp_path: Path, name: str, url: Path) -> Path:
    """`client`, with its own author."""
    repo = client(tmp_path, name, url)
    git(repo, "config", "user.name", AUTHOR_NAME)
    git(repo, "config", "user.email", AUTHOR_EMAIL)
    return repo


def make_clone(url: str, path: Path, code: bool = False) -> Path:
    """`git clone URL path`; with `code`, one commit of a README dated well before any entry."""
    git(path.parent, "clone", "--quiet", url, path.name)
    if code:
        old = "2020-01-01T00:00:00Z"  # well before any entry a test records
        commit_file(
            path, "README", "hello\n", message="initial", env={"GIT_COMMITTER_DATE": old, "GIT_AUTHOR_DATE": old}
        )
    return path


def commit_file(
    repo: Path,
    name: str = "README",
    text: str = "hello\n",
    message: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
) -> None:
    """Write `name` with `text` and commit it (message "add NAME" unless given)."""
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message or f"add {name}", env=env)


def code_commit(repo: Path, path: str, lines: int, when: str, message: str = "change", mv: tuple[str, ...] = ()) -> str:
    """A real code commit adding `lines` lines to `path` (after `git mv` of `mv`), dated
    `when`: its id."""
    if mv:
        (repo / mv[1]).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", *mv)
    f = repo / path
    f.parent.mkdir(parents=True, exist_ok=True)
    old = f.read_text() if f.exists() else ""
    f.write_text(old + "".join(f"line {message} {n}\n" for n in range(lines)))
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    return git(repo, "rev-parse", "HEAD")


def make_repo(path: Path) -> Path:
    """A repository with one commit (a README), as a project has before it adopts a ledger."""
    init_repo(path)
    commit_file(path, "README", "a project\n", message="start")
    return path


def project_on_remote(tmp_path: Path, name: str = "a", upstream: bool = False) -> tuple[Path, Path]:
    """A bare remote `tmp_path/remote.git` and a project `tmp_path/NAME` (one commit) whose
    origin is it by a file URL, its main pushed (and tracked, with `upstream`): (remote, project)."""
    remote = bare(tmp_path, "remote.git")
    repo = make_repo(tmp_path / name)
    git(repo, "remote", "add", "origin", remote.as_uri())
    git(repo, "push", "-q", *(["-u"] if upstream else []), "origin", "main")
    return remote, repo


@pytest.fixture(name="repo")
def repo_with_a_commit(tmp_path: Path) -> Path:
    """(as `repo`, where imported) `make_repo`: a repository with one commit."""
    return make_repo(tmp_path / "repo")


def commit_policy(repo: Path, doc: Policy) -> None:
    """Commit `.lifeline/policy.json` (a document, or text taken as it is)."""
    (repo / ".lifeline").mkdir(exist_ok=True)
    text = doc if isinstance(doc, str) else json.dumps(doc, indent=2)
    (repo / ".lifeline" / "policy.json").write_text(text)
    git(repo, "add", ".lifeline/policy.json")
    git(repo, "commit", "-q", "-m", "policy")


def log_entry(
    repo: Path,
    kind: str,
    summary: str,
    body: Optional[str],
    *more: Arg,
    via: Via = Via.PYTHON,
    expect: Optional[int] = 0,
) -> Result:
    """`git lifeline log --kind KIND --summary SUMMARY --body BODY MORE...` in `repo` (no
    --body when `body` is None), which must exit with `expect` (0 unless told)."""
    told = () if body is None else ("--body", body)
    return cli(repo, "log", "--kind", kind, "--summary", summary, *told, *more, via=via, expect=expect)


def logged_id(repo: Path, kind: str, summary: str, body: Optional[str], *more: Arg, via: Via = Via.PYTHON) -> str:
    """`log_entry` with --json: the new entry's id."""
    return json.loads(log_entry(repo, kind, summary, body, *more, "--json", via=via).out)["entry"]["id"]


def log_decision(repo: Path, summary: str = "First decision", body: str = "Because.") -> None:
    """A human's decision, through the CLI."""
    log_entry(repo, "decision", summary, body)


def git_push(
    repo: Path,
    *specs: str,
    flags: tuple[str, ...] = (),
    remote: str = "origin",
    env: Optional[Mapping[str, str]] = None,
    timeout: float = TIMEOUT,
) -> tuple[int, str]:
    """A real `git push [FLAGS] REMOTE SPECS...` (running whatever hooks are installed,
    `git lifeline` found on PATH; `env` adds to the environment): (exit code, stderr)."""
    out = git(repo, "push", *flags, remote, *specs, check=False, env=env, timeout=timeout)
    return out.code, out.err


def ref(repo: Path, name: str) -> Optional[str]:
    """The object id `name` resolves to in `repo`, or None when it does not."""
    return git(repo, "rev-parse", "--verify", "-q", name, check=False) or None


def head(repo: Path, ref: str = "refs/lifeline/main") -> Optional[str]:
    """The commit `ref` names (a ledger line by default), or None."""
    return git(repo, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False) or None


def open_workspace(repo: Path) -> Workspace:
    return Workspace.open(str(repo))


def open_ledger(repo: Path, line: Optional[str] = None) -> Ledger:
    """A Ledger on `repo`. It reads git config once: open a new one after `git config`."""
    return open_workspace(repo).ledger(line)


def line_ids(repo: Path, line: str = "main") -> list[str]:
    """The ids of a line's entries, in the ledger's order."""
    return [e.id for e in open_ledger(repo, line).entries()]


def entry_paths(repo: Path, ref: str = "refs/lifeline/main") -> list[str]:
    """Every path in the tree of `ref`."""
    out = git(repo, "ls-tree", "-r", "--name-only", ref)
    return out.splitlines() if out else []


def snapshot(repo: Path, projection: Optional[Path] = None) -> Snapshot:
    """What a write would change: every ref, every reachable object, the projection bytes."""
    proj = projection if projection is not None else repo / "LIFELINE.md"
    return {
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "objects": git(repo, "rev-list", "--objects", "--all"),
        "projection": proj.read_bytes() if proj.exists() else None,
    }


def object_count(repo: Path) -> int:
    """Loose and packed objects, as `git count-objects -v` counts them."""
    vals = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(vals["count"]) + int(vals["in-pack"])


def odb_objects(repo: Path) -> set[str]:
    """Every object in the object database, reachable or not (loose and packed)."""
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def odb_holds(repo: Path, needle: bytes) -> bool:
    """Whether any object in the object database contains `needle` (decompressed)."""
    return needle in git(repo, "cat-file", "--batch-all-objects", "--batch").raw


def files_hold(root: Path, needle: bytes) -> list[Path]:
    """Files under `root` whose bytes contain `needle` (caches, locks, projections, logs)."""
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def work_tree_files(root: Path, skip_git: bool = True) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every file under root (outside .git when skip_git)."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if skip_git and rel.parts and rel.parts[0] == ".git":
            continue
        if p.is_file():
            st = p.stat()
            out[str(rel)] = (st.st_size, st.st_mtime_ns)
    return out


def remote_and_clones(base: Path, names: Sequence[str] = ("a", "b")) -> tuple[Path, ...]:
    """A bare remote holding one ledger entry, and clones of it that pulled the ledger:
    (remote, clone, clone, ...)."""
    remote = init_repo(base / "remote.git", "--bare")
    clones = [make_clone(str(remote), base / name) for name in names]
    first = Workspace.open(str(clones[0]))
    first.ledger().log(Draft(kind="bootstrap", summary="Shared project", body="the remote's first entry"))
    exchange.sync_with(first, "origin")
    for clone in clones[1:]:
        exchange.pull(Workspace.open(str(clone)), "origin")
    return (remote, *clones)
