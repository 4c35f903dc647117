"""Links from code commits to ledger entries: the `Lifeline: <id>` trailer.

A commit says which entry explains it with a trailer in its message:

    Lifeline: 3f2a9c1e...   (a full id, or a unique prefix of at least 6 hex)

`why(path)` walks the commits that touched a path (newest first, through
`git log` run from the user's directory, so a PATH, a pathspec and `git -c` settings
mean what they mean to git; one file is followed across renames with `--follow`) and
lists the entries they link to: the blame of the why.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import InputError
from .command import run_git
from .namespaces import LEDGER
from .repo import GitRepo
from .store import LineStore

TRAILER = "Lifeline"
_VALUE = re.compile(r"[0-9a-fA-F]{6,64}")
_TRAILER_SEP = "\x1e"
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass
class Link:
    commit: str
    date: int  # committer time (unix)
    subject: str
    value: str  # the trailer value as written
    entry_id: Optional[str] = None  # resolved full id (None: not in any local line)
    line: Optional[str] = None


def trailer_values(gr: GitRepo, message: bytes) -> list[str]:
    """Values of the Lifeline trailers of a commit message, as git parses trailers."""
    proc = gr.git(["interpret-trailers", "--parse", "--no-divider"], input=message, check=False)
    out = []
    for raw in proc.stdout.decode("utf-8", "replace").splitlines():
        key, sep, value = raw.partition(":")
        if sep and key.strip().lower() == TRAILER.lower():
            out.append(value.strip())
    return out


def resolve(gr: GitRepo, value: str, prefer_line: str) -> tuple[str, str]:
    """(full id, line) for a trailer value; InputError when unknown or ambiguous."""
    if not _VALUE.fullmatch(value):
        raise InputError(f"'{TRAILER}: {value}' is not an entry id (give a full id or >= 6 hex characters)")
    lines = [prefer_line] + [n for n in LEDGER.names(gr) if n != prefer_line]
    last = None
    for name in lines:
        try:
            return LineStore(gr, name).resolve(value.lower()), name
        except InputError as exc:
            if "ambiguous" in str(exc):
                raise
            last = exc
    raise InputError(
        f"'{TRAILER}: {value}' names no entry in this clone's ledger"
        f"{' (' + str(last) + ')' if last and len(lines) > 1 else ''}; "
        "record it first, or pull it: git lifeline pull"
    )


def _here(gr: GitRepo) -> Optional[Path]:
    """The user's directory when it is inside the work tree (None: a bare repository,
    or a command run from elsewhere)."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return None
    top = gr.workdir.resolve() if gr.workdir is not None else None
    return cwd if top is not None and (cwd == top or top in cwd.parents) else None


def _git_here(gr: GitRepo, args: list[str]) -> subprocess.CompletedProcess:
    """git run from the user's directory when it is inside the work tree, so a relative
    PATH (and `..`) is read as git reads it there; else from the top."""
    here = _here(gr)
    if here is not None and gr.workdir is not None:
        return run_git(
            ["--git-dir", str(gr.git_dir), "--work-tree", str(gr.workdir.resolve()), *args], cwd=str(here), check=False
        )
    return gr.git(args, check=False)


def _path_kind(gr: GitRepo, target: str) -> Optional[str]:
    """ "file" (one file, followed across renames), "paths" (a directory or a pathspec)
    or None (git knows no such path, now or in the history)."""
    magic = target.startswith(":") or any(c in target for c in "*?[")
    here = _here(gr)
    on_disk = here / target if here is not None and not magic else None
    if on_disk is not None and on_disk.is_dir():
        return "paths"
    if on_disk is not None and (on_disk.exists() or on_disk.is_symlink()):
        return "file"
    proc = _git_here(gr, ["ls-files", "--error-unmatch", "--", target])
    known = proc.returncode == 0
    if not known:
        proc = _git_here(gr, ["log", "-1", "--format=%H", "--", target])
        known = proc.returncode == 0 and bool(proc.stdout.strip())
    if not known:
        return None
    if magic:
        return "paths"
    # a tree at HEAD is a directory; anything else git knows under that name is a file
    proc = _git_here(gr, ["cat-file", "-t", f"HEAD:./{target}"])
    return "paths" if proc.stdout.strip() == b"tree" else "file"


def links_for(gr: GitRepo, target: str, prefer_line: str, limit: int = 10000) -> list[Link]:
    """Links of the commits that touched `target` (a path or pathspec, as git reads it
    from the current directory), or of one commit; newest first."""
    if not target or target.startswith("-"):
        raise InputError(f"invalid path or commit {target!r}")
    # NUL-separated (-z ends each commit with one too): no message holds a NUL, while a
    # subject may hold any other control character, so it cannot shift one field into the
    # next (a subject that invented a record claimed another commit's link)
    fmt = f"--format=%H%x00%ct%x00%(trailers:key={TRAILER},valueonly,separator=%x1e)%x00%s"
    kind = _path_kind(gr, target)
    if kind is not None:
        follow = ["--follow"] if kind == "file" else []
        proc = _git_here(gr, ["log", "-z", fmt, f"--max-count={limit}", *follow, "--", target])
    else:
        proc = gr.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{target}^{{commit}}"], check=False)
        sha = proc.stdout.decode().strip()
        if proc.returncode != 0 or not sha:
            raise InputError(f"{target!r} is neither a path in this repository nor a commit")
        proc = gr.git(["log", "-z", "-1", fmt, "--end-of-options", sha], check=False)
    if proc.returncode != 0:
        # an unborn branch has no history: nothing links to anything yet
        return []
    out = []
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    for i in range(0, len(fields) - 3, 4):
        commit, ct, trailers, subject = fields[i : i + 4]
        commit = commit.strip("\n")
        if not _COMMIT.fullmatch(commit) or not ct.isdigit():
            continue
        for value in trailers.split(_TRAILER_SEP):
            value = value.strip()
            if not value:
                continue
            link = Link(commit, int(ct or 0), subject, value)
            try:
                link.entry_id, link.line = resolve(gr, value, prefer_line)
            except InputError:
                pass
            out.append(link)
    return out
