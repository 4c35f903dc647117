"""git's diff of a range, for verify (verify.verify_range): one `git diff-tree --stdin`
for every commit of the range against each parent, and the range's base and tip trees."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import threading
from typing import IO, Iterator, Optional, Sequence, Union, cast

from .blobs import PACK_WINDOWS
from .command import git_cwd
from .repo import GitRepo

CommitId = str  # 40 hex
TreePair = tuple[str, str]  # (old tree, new tree): what a range adds in all
DiffKey = Union[CommitId, TreePair]  # whose changes: a commit's (against each parent) or the pair's
# One change of `git diff-tree -r` as verify reads it: (status, new mode, new oid, path)
TreeChange = tuple[str, str, str, str]


class HistoryUnreadable(Exception):
    """git could not read part of the history (a missing object)."""


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree


def diff_commits(
    gr: GitRepo, commits: Sequence[CommitId], pair: Optional[TreePair] = None, roots: Optional[dict[str, str]] = None
) -> Iterator[tuple[DiffKey, list[TreeChange], bool]]:
    """(commit id, [(status, new mode, new oid, path)], more) for each commit against each
    parent, then, when `pair` (old tree, new tree) is given, (`pair`, its changes, more);
    one diff comes in pieces of at most `CHUNK` changes, `more` True on all but its first.

    One `git diff-tree --stdin` process diffs the commits: in C, skipping equal subtrees,
    it is ~6x faster than walking the trees from Python one commit at a time, which made
    a first pull of a 10k-entry line take tens of seconds. A root commit (`roots`: commit
    -> its tree) and a pair from the empty tree are what their tree holds, listed by `git
    ls-tree -r` instead: diff-tree holds every change of one diff before it prints it
    (~400 bytes each: 630 MB of git's for a million-entry tree), ls-tree prints as it
    walks. The output is parsed and handed on as it comes, so the caller holds one piece
    at a time. HistoryUnreadable, when git fails, comes after what it printed.
    """
    roots = roots or {}
    run: list[CommitId] = []
    for c in commits:
        if c in roots:
            yield from _diff_tree(gr, run, None)
            run = []
            yield from _listing(gr, c, roots[c])
        else:
            run.append(c)
    yield from _diff_tree(gr, run, pair if pair is not None and pair[0] != EMPTY_TREE else None)
    if pair is not None and pair[0] == EMPTY_TREE:
        yield from _listing(gr, pair, pair[1])


def _diff_tree(
    gr: GitRepo, commits: Sequence[CommitId], pair: Optional[TreePair]
) -> Iterator[tuple[DiffKey, list[TreeChange], bool]]:
    if not commits and not pair:
        return
    lines = "".join(f"{c}\n" for c in commits) + (f"{pair[0]} {pair[1]}\n" if pair else "")
    # the objects the refs name, not what refs/replace/* (a pusher can create them on a
    # server) or a .gitmodules `ignore` rule (a checked-out file) would show in their place
    args = ["--no-replace-objects", "diff-tree", "--stdin", "-r", "-m", "--root", "--no-renames"]
    args += ["--ignore-submodules=none", "-z"]
    seen: set[DiffKey] = set()
    with _git(gr, args, lines.encode("ascii"), "git diff-tree failed") as out:
        for current, changes, more in _parse_diff_tree(_nul_tokens(out), pair):
            seen.add(current)
            yield current, changes, more
    for c in commits:  # commits whose tree equals their parents' print nothing
        if c not in seen:
            yield c, [], False
    if pair and pair not in seen:  # two equal trees
        yield pair, [], False


def _listing(gr: GitRepo, key: DiffKey, tree: str) -> Iterator[tuple[DiffKey, list[TreeChange], bool]]:
    """What diff-tree prints for `tree` against the empty tree, from `git ls-tree -r`:
    every blob and gitlink, added, in the tree's order (no tree itself, as under -r)."""
    changes: list[TreeChange] = []
    more = False
    args = ["--no-replace-objects", "ls-tree", "-r", "-z", "--end-of-options", tree]
    with _git(gr, args, b"", f"git ls-tree {tree} failed") as out:
        for record in _nul_tokens(out):
            meta, _tab, path = record.partition(b"\t")
            mode, _kind, oid = meta.decode("ascii").split(" ")
            changes.append(("A", _shared(mode.encode("ascii")), oid, path.decode("utf-8", "surrogateescape")))
            if len(changes) >= CHUNK:
                yield key, changes, more
                changes, more = [], True
    if changes or not more:
        yield key, changes, more


@contextlib.contextmanager
def _git(gr: GitRepo, args: list[str], stdin: bytes, failed: str) -> Iterator[IO[bytes]]:
    """A git process whose output is read as it comes (its input written beside it);
    HistoryUnreadable with git's last line of errors when it fails."""
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            ["git", *PACK_WINDOWS, "--git-dir", str(gr.git_dir), *args],
            cwd=git_cwd(str(gr.git_dir), str(gr.workdir) if gr.workdir else None),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        feeder = threading.Thread(target=_feed_lines, args=(proc, stdin), daemon=True)
        feeder.start()
        try:
            yield cast(IO[bytes], proc.stdout)
        finally:
            if proc.poll() is None:
                proc.kill()  # the caller stopped early: nothing more is read
            code = proc.wait()
            feeder.join(timeout=5)
            cast(IO[bytes], proc.stdout).close()
        if code != 0:
            errors.seek(0)
            reason = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise HistoryUnreadable(reason[-1] if reason else failed)


def _feed_lines(proc: subprocess.Popen, data: bytes) -> None:
    """diff-tree's input, written beside the reading of its output (a long range's input
    and output could each fill a pipe)."""
    stdin = cast(IO[bytes], proc.stdin)
    try:
        stdin.write(data)
    except (BrokenPipeError, ValueError, OSError):
        pass  # git stopped early: its exit code says why
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


def _nul_tokens(out: IO[bytes]) -> Iterator[bytes]:
    """The NUL-ended tokens of git's `-z` output, read in 256 KB chunks."""
    rest = b""
    while True:
        chunk = out.read1(1 << 18) if hasattr(out, "read1") else out.read(1 << 18)
        if not chunk:
            break
        tokens = (rest + chunk).split(b"\0")
        rest = tokens.pop()
        yield from tokens
    if rest:
        yield rest


# git's modes and statuses, one str each for the whole diff (not one per change)
_SHARED: dict[bytes, str] = {}


def _shared(raw: bytes) -> str:
    text = _SHARED.get(raw)
    if text is None:
        text = raw.decode("ascii", "replace")
        if len(_SHARED) < 64:  # only git's few modes and letters repeat; anything else is not kept
            _SHARED[raw] = text
    return text


CHUNK = 4096  # changes per piece diff_commits hands on


def _parse_diff_tree(
    tokens: Iterator[bytes], pair: Optional[TreePair]
) -> Iterator[tuple[DiffKey, list[TreeChange], bool]]:
    """(commit id or `pair`, a piece of its changes, more) from diff-tree's tokens, in git's order."""
    current: Optional[DiffKey] = None
    changes: list[TreeChange] = []
    more = False
    pair_header = f"{pair[0]} {pair[1]}" if pair else None
    for tok in tokens:
        if not tok.startswith(b":"):
            if not tok:
                continue
            if current is not None:
                yield current, changes, more
            # a commit's header is its id (then "(from <parent>)" at a merge), ended by NUL; the
            # pair's is both trees, ended by a newline even under -z
            head, newline, rest = tok.partition(b"\n")
            header = head.decode("ascii")
            current = pair if pair is not None and header == pair_header else header.split(" ", 1)[0]
            changes, more = [], False
            if not (newline and rest):
                continue
            tok = rest  # the first change's status line follows the newline
        meta = tok[1:].split(b" ")
        path = next(tokens, b"").decode("utf-8", "surrogateescape")
        changes.append((_shared(meta[4][:1]), _shared(meta[1]), meta[3].decode("ascii"), path))
        if len(changes) >= CHUNK and current is not None:
            yield current, changes, more
            changes, more = [], True
    if current is not None:
        yield current, changes, more
