"""A range of code commits as a pull request sees it: `<base>...<head>`.

The user's refs reach git only through `rev-parse --verify --end-of-options`, and what
comes back (full object ids) is all the other commands get. `base...head` (and `base..head`)
is what the branch `head` adds on top of its merge base with `base`, as a code host
shows a pull request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..errors import InputError
from .links import TRAILER
from .repo import GitRepo

_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_TRAILER_VALUE = re.compile(r"[0-9a-fA-F]{6,64}")
RANGE_COMMITS_LIMIT = 10000  # commits of one range read for their trailers


@dataclass(frozen=True)
class CodeRange:
    base_name: str  # as the user (or the default) named it
    head_name: str
    base: str  # full commit ids
    head: str
    merge_base: str


@dataclass(frozen=True)
class RangeCommit:
    commit: str
    subject: str
    trailers: tuple[str, ...]  # `Lifeline:` values that look like entry ids


def commit_oid(gr: GitRepo, rev: str) -> Optional[str]:
    """The full id of the commit git's rev-parse reads `rev` as (never as an option), or None."""
    proc = gr.git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], check=False)
    out = proc.stdout.decode("ascii", "replace").strip()
    return out if proc.returncode == 0 and _FULL_OID.fullmatch(out) else None


def default_base(gr: GitRepo) -> Optional[str]:
    """The name of what a branch is reviewed against: its upstream, else a remote's
    default branch (`refs/remotes/<remote>/HEAD`, origin first)."""
    if commit_oid(gr, "@{upstream}") is not None:
        return "@{upstream}"
    proc = gr.git(["for-each-ref", "--format=%(refname)", "refs/remotes/"], check=False)
    heads = [r for r in proc.stdout.decode("utf-8", "replace").splitlines() if r.endswith("/HEAD")]
    heads.sort(key=lambda r: (r != "refs/remotes/origin/HEAD", r))
    return heads[0] if heads else None


def resolve_range(gr: GitRepo, spec: Optional[str]) -> CodeRange:
    """`base...head`, `base..head` or `base` (against HEAD); None: the default base."""
    if spec is None:
        base_name: Optional[str] = default_base(gr)
        head_name = "HEAD"
        if base_name is None:
            raise InputError(
                "no range given and this branch has no upstream nor a remote default branch: "
                "give one, e.g. git lifeline pr origin/main...HEAD"
            )
    else:
        sep = "..." if "..." in spec else ".." if ".." in spec else None
        base_name, _, head_name = spec.partition(sep) if sep else (spec, "", "")
        base_name, head_name = base_name or "HEAD", head_name or "HEAD"
    ids = []
    for name in (base_name, head_name):
        oid = commit_oid(gr, name) if name and not name.startswith("-") else None
        if oid is None:
            raise InputError(f"{name!r} (in {spec or base_name!r}) does not name a commit")
        ids.append(oid)
    proc = gr.git(["merge-base", "--end-of-options", ids[0], ids[1]], check=False)
    merge_base = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or not _FULL_OID.fullmatch(merge_base):
        hint = " (a shallow clone: git fetch --deepen=100, or --unshallow)" if gr.is_shallow() else ""
        raise InputError(f"{base_name} and {head_name} have no common history{hint}")
    return CodeRange(base_name, head_name, ids[0], ids[1], merge_base)


def range_commits(gr: GitRepo, rng: CodeRange) -> list[RangeCommit]:
    """The commits the range adds, newest first, each with its `Lifeline:` trailer values."""
    fmt = f"--format=%H%x00%(trailers:key={TRAILER},valueonly,separator=%x1e)%x00%s"
    argv = ["log", "-z", fmt, f"--max-count={RANGE_COMMITS_LIMIT}", "--end-of-options", rng.head, f"^{rng.merge_base}"]
    proc = gr.git([*argv, "--"], check=False)
    if proc.returncode != 0:
        return []
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    out = []
    for i in range(0, len(fields) - 2, 3):
        commit, trailers, subject = fields[i].strip("\n"), fields[i + 1], fields[i + 2]
        if not _FULL_OID.fullmatch(commit):
            continue
        values = tuple(v.strip() for v in trailers.split("\x1e") if _TRAILER_VALUE.fullmatch(v.strip()))
        out.append(RangeCommit(commit, subject, values))
    return out
