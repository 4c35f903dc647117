"""Links from code commits to ledger entries: the `Lifeline: <id>` trailer.

A commit says which entry explains it with a trailer in its message:

    Lifeline: 3f2a9c1e...   (a full id, or a unique prefix of at least 6 hex)

`why(path)` walks the commits that touched a path (newest first, through
`git log`, so renames, pathspecs and `git -c` settings behave as in git) and lists
the entries they link to: the blame of the why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import InputError
from .repo import GitRepo
from .store import LineStore, list_lines

TRAILER = "Lifeline"
_VALUE = re.compile(r"[0-9a-fA-F]{6,64}")
_FIELD_SEP, _RECORD_SEP, _TRAILER_SEP = "\x1f", "\x1d", "\x1e"


@dataclass
class Link:
    commit: str
    date: int          # committer time (unix)
    subject: str
    value: str         # the trailer value as written
    entry_id: Optional[str] = None   # resolved full id (None: not in any local line)
    line: Optional[str] = None


def trailer_values(gr: GitRepo, message: bytes) -> list:
    """Values of the Lifeline trailers of a commit message, as git parses trailers."""
    proc = gr.git(["interpret-trailers", "--parse", "--no-divider"], input=message, check=False)
    out = []
    for raw in proc.stdout.decode("utf-8", "replace").splitlines():
        key, sep, value = raw.partition(":")
        if sep and key.strip().lower() == TRAILER.lower():
            out.append(value.strip())
    return out


def resolve(gr: GitRepo, value: str, prefer_line: str) -> tuple:
    """(full id, line) for a trailer value; InputError when unknown or ambiguous."""
    if not _VALUE.fullmatch(value):
        raise InputError(f"'{TRAILER}: {value}' is not an entry id (give a full id or >= 6 hex characters)")
    lines = [prefer_line] + [n for n in list_lines(gr) if n != prefer_line]
    last = None
    for name in lines:
        try:
            return LineStore(gr, name).resolve(value.lower()), name
        except InputError as exc:
            if "ambiguous" in str(exc):
                raise
            last = exc
    raise InputError(f"'{TRAILER}: {value}' names no entry in this clone's ledger"
                     f"{' (' + str(last) + ')' if last and len(lines) > 1 else ''}; "
                     "record it first, or pull it: git lifeline pull")


def _is_path(gr: GitRepo, target: str) -> bool:
    if gr.workdir is not None and (Path.cwd() / target).exists():
        return True
    proc = gr.git(["ls-files", "--error-unmatch", "--", target], check=False)
    if proc.returncode == 0:
        return True
    proc = gr.git(["cat-file", "-e", f"HEAD:{target}"], check=False)
    return proc.returncode == 0


def links_for(gr: GitRepo, target: str, prefer_line: str, limit: int = 10000) -> list:
    """Links of the commits that touched `target` (a path), or of one commit; newest first."""
    if not target or target.startswith("-"):
        raise InputError(f"invalid path or commit {target!r}")
    fmt = f"--format=%H{_FIELD_SEP}%ct{_FIELD_SEP}%s{_FIELD_SEP}" \
          f"%(trailers:key={TRAILER},valueonly,separator=%x1e){_RECORD_SEP}"
    if _is_path(gr, target):
        args = ["log", fmt, f"--max-count={limit}", "--", target]
    else:
        proc = gr.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{target}^{{commit}}"], check=False)
        sha = proc.stdout.decode().strip()
        if proc.returncode != 0 or not sha:
            raise InputError(f"{target!r} is neither a path in this repository nor a commit")
        args = ["log", "-1", fmt, sha]
    proc = gr.git(args, check=False)
    if proc.returncode != 0:
        # an unborn branch has no history: nothing links to anything yet
        return []
    out = []
    for record in proc.stdout.decode("utf-8", "replace").split(_RECORD_SEP):
        record = record.strip("\n")
        if not record:
            continue
        parts = record.split(_FIELD_SEP)
        if len(parts) < 4:
            continue
        commit, ct, subject, trailers = parts[0], parts[1], parts[2], _FIELD_SEP.join(parts[3:])
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
