"""Integrity of a log (a line of the ledger, a review trail) across its history: ONE engine.

`verify_range(log, tip, hide)` checks what `tip` adds on top of the `hide` commits
(already trusted); with no `hide` it checks the whole history. The full verification
(`verify_log`: `git lifeline verify`) is that range from the root, plus what only the
local repository can tell: the reflog never saw a value the head does not contain (a
shallow clone is fine when no commit of the log's own history is a shallow boundary).
Pull, push, the pre-push and pre-receive hooks and verify all use this one engine, for every namespace (namespaces.NAMESPACES), so what one gate refuses
every gate refuses.

The shared walk (each a problem with a code, so tests and hooks can tell them apart):
* the ref points at a commit, and no commit of the range is a shallow boundary;
* every commit's tree has the documented shape (only the namespace's directory,
  fan-out paths, plain blobs);
* every blob is a valid record stored under its own id (the namespace's checks,
  checks.py: for the ledger, the entry recomputes to its id and holds no credential
  unless its body records the override; for a trail, the record is canonical, hashes
  to its path and belongs to the trail's line);
* append-only: each commit holds every record of each of its parents, unchanged,
  except that a merge may pick one of two blobs of one id by the namespace's rule
  (the ledger's: earliest ts, then smallest blob id), and what it keeps is judged
  again (`Checks.changed`: the ledger's pick never dates an entry before its parents
  beyond the tolerance of docs/FORMAT.md §5);
then what the namespace asks of the records the range adds (checks.py): the ledger's
parents and origins against the repository's real lines, a trail's decisions.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

from ..core.entry import abbrev
from ..errors import LifelineError
from .checks import Checks, Problem, Report, added_from_changes, added_records, checks_for
from .fanout import CorruptionError, FanoutLog, Progress, clash_message, name_clashes, no_progress
from .libgit2 import pygit2
from .namespaces import LEDGER, REVIEW, names_in_use
from .refs import rewound_value
from .repo import GitRepo
from .trees import entry_path, is_entry_path
from .verdicts import VerdictMemo
from .verify_diff import HistoryUnreadable, diff_commits


def verify_range(
    log: FanoutLog,
    tip: str,
    hide: Iterable = (),
    progress: Optional[Callable[[int], Any]] = None,
    pending: Optional[dict] = None,
    memo: Optional[VerdictMemo] = None,
    keep_records: bool = True,
) -> Report:
    """Verify what `tip` adds to the log on top of the `hide` commits (already trusted).

    The cost follows the size of the change, so pulls, pushes and hooks can afford it
    on every call. `pending` ({line: head}) names ledger heads that land by the same
    verification (the other lines of a pull or a push): a parent or an origin found there
    counts. `progress(total)`, when given, returns an object whose `update(n)` is called
    per commit. `memo` (only `verify_log`'s: a gate passes none) lets the secret scan and
    the header check skip content an earlier verify found clean (verdicts.py).
    `keep_records` False (verify's full pass, which returns no records) keeps of each entry
    only what the cross-entry checks read, so memory grows by ~400 bytes an entry, not by
    the entry (checks.Kept).
    """
    repo = log.repo
    hide = [h for h in hide if h]
    report = Report(log.name, tip, namespace=log.ns.name)
    try:
        obj = repo.get(tip)
    except (pygit2.GitError, ValueError) as exc:  # a commit git cannot parse (a forged date, say)
        report.problems.append(Problem("bad-commit", f"commit {abbrev(tip)} cannot be read: {exc}"))
        return report
    if obj is None:
        report.problems.append(_missing(KeyError(tip)))
        return report
    if not isinstance(obj, pygit2.Commit):
        report.problems.append(Problem("bad-ref", f"{log.ref_name} points at a {obj.type_str}, not a commit"))
        return report
    try:
        walker = repo.walk(obj.id, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE)
        for h in hide:
            walker.hide(pygit2.Oid(hex=h))
        commits = list(walker)
    except (KeyError, pygit2.GitError) as exc:
        report.problems.append(_missing(exc))
        return report
    shallow = _shallow_commits(repo, log.gr.common_dir)
    for commit in commits:
        if str(commit.id) in shallow or "?" in shallow:
            report.problems.append(
                Problem(
                    "shallow",
                    f"commit {abbrev(str(commit.id))} is where a shallow clone cut the history: the rest is "
                    f"missing, so the {log.ns.whole} cannot be vouched for (fetch it whole: git fetch "
                    f"--unshallow, or git fetch <remote> '+{log.ns.ref_prefix}*:{log.ns.ref_prefix}*' "
                    "without --depth)",
                )
            )
            return report
    report.commits = len(commits)
    checks = checks_for(log, hide, pending, memo, keep_records)
    bar = progress(len(commits)) if progress is not None else None
    by_id = {str(c.id): c for c in commits}
    # What the range adds in all (base tree -> tip tree): the same git process diffs it,
    # unless the range is one commit on top of the base, whose own diff is that.
    one_step = len(commits) == 1 and [str(p) for p in commits[0].parent_ids] == [str(h) for h in hide[:1]]
    pair = None if one_step else _tree_pair(repo, hide, obj)
    whole: Optional[list] = None
    try:
        diffs = list(diff_commits(log.gr, commits, pair))
    except HistoryUnreadable as exc:
        diffs = []
        report.problems.append(
            Problem(
                "missing-object",
                f"the history cannot be read ({exc}): a damaged or incomplete object database (run `git fsck`)",
            )
        )
    checks.preload(diffs)
    diffs.reverse()  # each commit's changes are dropped once walked: popped from the end
    while diffs:
        cid, changes = diffs.pop()
        if cid == pair:
            whole = changes
            continue
        if one_step:
            whole = changes
        if bar is not None:
            bar.update(1)
        try:
            for status, new_mode, new_oid, path in changes:
                _check_change(log, checks, by_id[cid], status, new_mode, new_oid, path, report)
        except KeyError as exc:
            report.problems.append(_missing(exc, cid))
    try:
        tip_tree = log.tree(tip)
        if whole is None:  # git could not diff the trees: what the tip adds, from the trees themselves
            added = added_records(log, checks, log.tree(hide[0]) if hide else None, tip_tree)
        else:
            report.problems.extend(_tree_name_problems(log, whole, tip_tree))
            added = added_from_changes(log, checks, whole)
        report.entries = len(added)
        report.added = added
        checks.finish(report, added, tip_tree)
    except KeyError as exc:
        report.problems.append(_missing(exc))
    report.problems = _unique(report.problems)
    return report


def _tree_name_problems(log: FanoutLog, changes: list, tip_tree: Optional[pygit2.Tree]) -> list:
    """Tree entries that git prints as an entry's path but a reader does not find there:
    a name holding slashes ("13/c5/<60 hex>" directly in the tree dir) or a name given
    twice in one tree. git's own fsck refuses such trees, but receive-pack does not run it
    by default; judged by path alone, the copy readers see could carry what the copy
    checked did not (a date, a secret)."""
    problems: list = []
    prefix = log.ns.tree_dir + "/"
    named = [
        (path, new)
        for status, _mode, new, path in changes
        if status != "D" and path.startswith(prefix) and is_entry_path(path[len(prefix) :])
    ]
    keys = (path[len(prefix) :].replace("/", "") for path, _new in named)
    seen: set = set()
    with _small_object_cache():
        for (path, new), (key, found) in zip(named, _stored_under(tip_tree, keys), strict=True):
            _name_problem(path, new, key, found, seen, problems)
    return problems


def _name_problem(path: str, new: str, key: str, found: Optional[pygit2.Oid], seen: set, problems: list) -> None:
    if path in seen:
        problems.append(Problem("foreign-file", f"{path} is named twice in one tree"))
    elif found != pygit2.Oid(hex=new):
        problems.append(
            Problem(
                "foreign-file",
                f"{path} is not where a reader finds {abbrev(key)} (a tree "
                "entry name holding a slash, or one name given twice)",
            )
        )
    seen.add(path)


@contextlib.contextmanager
def _small_object_cache() -> Iterator[None]:
    """libgit2's object cache held to 16 MB while every fan-out tree of a line is read once:
    each is read once, so caching them gains nothing, and libgit2 would keep up to 256 MB
    of them (~440 bytes an entry: 44 MB at 100k)."""
    _used, allowed = pygit2.settings.cached_memory
    pygit2.settings.cache_max_size(min(allowed, 16 << 20))
    try:
        yield
    finally:
        pygit2.settings.cache_max_size(allowed)


# The names of both fan-out levels, one str each: pygit2 (1.21) keeps a reference to every
# name a Tree is indexed with (see trees.lookup), so only these shared ones index a Tree here.
_FANOUT_NAMES = {f"{i:02x}": f"{i:02x}" for i in range(256)}


def _stored_under(tree: Optional[pygit2.Tree], keys: Iterable[str]) -> Iterator[tuple[str, Optional[pygit2.Oid]]]:
    """(key, the blob a reader finds under that entry id in `tree`, or None), for ids in
    path order: each fan-out subtree is read once and its names scanned once, the first of
    a name winning as in trees.lookup. lookup_all indexed each leaf by its id, and pygit2
    kept every such name and ~240 bytes of native memory: 1.3 KB an entry at 100k."""
    first_name: Optional[str] = None
    second_name: Optional[str] = None
    first: Optional[pygit2.Tree] = None
    leaf: dict = {}
    for key in keys:
        a, b, rest = entry_path(key)
        if a != first_name:
            first_name, first, second_name = a, _fanout_child(tree, a), None
        if a + b != second_name:
            second_name, leaf = a + b, {}
            try:
                for stored in _fanout_child(first, b) or ():
                    leaf.setdefault(stored.name, stored.id if stored.type_str == "blob" else None)
            except (KeyError, ValueError, pygit2.GitError):
                leaf = {}  # a missing subtree: nothing is found in it
        yield key, leaf.get(rest)


def _fanout_child(tree: Optional[pygit2.Tree], name: str) -> Optional[pygit2.Tree]:
    """The fan-out subtree `tree` names `name` (two hex digits), or None."""
    shared = _FANOUT_NAMES.get(name)
    if tree is None or shared is None:
        return None
    try:
        if shared not in tree:
            return None
        child = tree[shared]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return child if isinstance(child, pygit2.Tree) else None


def verified_incoming(
    log: FanoutLog,
    local: Optional[str],
    theirs: str,
    source: str,
    progress: Progress = no_progress,
    pending: Optional[dict] = None,
) -> dict:
    """The gate of every integration: verify what `theirs` adds to `local` and return
    it (id -> record, parsed once for every later use); CorruptionError names the
    problems, and the caller moves nothing."""
    with contextlib.ExitStack() as stack:
        # the bar opens once verify_range knows how many commits it will check
        label = f"verifying {source}/{log.ns.push_prefix}{log.name}"
        report = verify_range(
            log,
            theirs,
            [local] if local else [],
            pending=pending,
            progress=lambda total: stack.enter_context(progress(label, total)),
        )
    if not report.ok:
        raise CorruptionError(
            f"{log.ns.noun} {log.name} from {source} failed verification; nothing was changed:",
            *problem_lines(report.problems),
        )
    return report.added


def problem_lines(problems: list, limit: int = 20) -> list[str]:
    """The problems as indented lines (`  code: message (commit abc)`), at most `limit`:
    lines of an error's message (errors.LifelineError), one each."""
    shown = [f"  {p.describe()}" for p in problems[:limit]]
    return shown + ([f"  ... and {len(problems) - limit} more"] if len(problems) > limit else [])


def verify_log(log: FanoutLog, in_use: Optional[set] = None) -> Report:
    """The full verification of a log: its whole history (verify_range with nothing
    hidden), every commit of it present (none a shallow-clone boundary), with a reflog
    that was never rewound, under a name no other line name in use (`in_use`: every
    family's, read here when not given) equals by case (fanout.name_clashes).

    A shallow clone is fine when the log's own history is whole: CI checks out the code
    with `--depth 1` and fetches `refs/lifeline/*` in full (the ledger shares no commit
    with the code). A log fetched with a depth is cut, and refused by verify_range."""
    head = log.head()
    report = Report(log.name, head, namespace=log.ns.name)
    if head is None:
        return report
    memo = VerdictMemo.open(log.gr) if log.ns is LEDGER else None  # a trail's records are not entries
    report = verify_range(log, head, (), memo=memo, keep_records=False)
    if memo is not None:
        memo.save()
    if not any(p.code == "bad-commit" for p in report.problems) and isinstance(log.repo.get(head), pygit2.Commit):
        old = rewound_value(log.repo, log.ref_name, pygit2.Oid(hex=head))
        if old is not None:
            report.problems.append(
                Problem(
                    "rewound",
                    f"{log.ref_name} once pointed at {abbrev(str(old))}, which the current head does not "
                    f"contain: the {log.ns.noun} was rewound or rewritten",
                )
            )
    # a pair made before the rule (or by hand) keeps working here, and is named
    clash = name_clashes((), names_in_use(log.gr) if in_use is None else in_use).get(log.name)
    if clash is not None:
        report.problems.append(Problem("name-clash", clash_message(log.name, clash)))
    return report


def verify_line(store: FanoutLog, in_use: Optional[set] = None) -> Report:
    """`git lifeline verify` for one line."""
    return verify_log(store, in_use)


def verify_trail(gr: GitRepo, line: str, commit: Optional[str] = None, in_use: Optional[set] = None) -> Report:
    """`git lifeline verify` for the review trail of `line`; with `commit`, the whole
    history of that commit instead of the ref (no reflog: it is not the ref's)."""
    trail = FanoutLog(gr, REVIEW, line)
    if commit is None:
        return verify_log(trail, in_use)
    return verify_range(trail, commit, ())


def _check_change(
    log: FanoutLog,
    checks: Checks,
    commit: pygit2.Commit,
    status: str,
    new_mode: str,
    new_oid: str,
    path: str,
    report: Report,
) -> None:
    """The shape and append-only rules for one path a commit changed against a parent."""
    cid = str(commit.id)
    prefix = log.ns.tree_dir + "/"
    if not path.startswith(prefix):
        if status != "D":
            top = path.split("/", 1)[0]
            report.problems.append(Problem("foreign-file", f"unexpected '{top}' at the root of the tree", cid))
        return
    rel = path[len(prefix) :]
    if status == "D":
        if is_entry_path(rel):
            report.problems.append(
                Problem(
                    "removed", f"{log.ns.item} {abbrev(rel.replace('/', ''))} was removed (history must only grow)", cid
                )
            )
        return
    if new_mode != "100644" or not is_entry_path(rel):
        report.problems.append(Problem("foreign-file", f"{path} is not {_a(log.ns.item)} blob", cid))
        return
    oid = pygit2.Oid(hex=new_oid)
    problem = checks.blob(rel, oid)
    if problem:
        code, why = problem
        report.problems.append(Problem(code, f"{path}: {why}", cid))
        return
    if status != "A":
        if not _merge_pick_ok(log, commit, rel, oid):
            report.problems.append(
                Problem("rewritten", f"{log.ns.item} {abbrev(rel.replace('/', ''))} was rewritten in place", cid)
            )
        else:
            checks.changed(commit, rel, checks.record(oid), report)
        return
    checks.added(commit, rel, checks.record(oid), report)


def _merge_pick_ok(log: FanoutLog, commit: pygit2.Commit, rel: str, new: pygit2.Oid) -> bool:
    """A changed blob is allowed only at a merge, and only as the namespace's pick among
    the parents' blobs of that id."""
    if len(commit.parents) < 2 or log.ns.pick is None:
        return False
    candidates = []
    for p in commit.parents:
        tree = log.tree(str(p.id))
        if tree is not None and rel in tree:
            candidates.append(tree[rel].id)
    if new not in candidates:
        return False
    try:
        return log.ns.pick(log.repo, candidates) == str(new)
    except LifelineError:
        return False


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _unique(problems: list) -> list:
    """Problems in order, each (code, message) once (a merge is diffed against each parent)."""
    out, seen = [], set()
    for p in problems:
        if (p.code, p.message) not in seen:
            seen.add((p.code, p.message))
            out.append(p)
    return out


def _missing(exc: BaseException, commit: Optional[str] = None) -> Problem:
    what = exc.args[0] if exc.args else exc
    return Problem(
        "missing-object",
        f"object {what} is missing from the repository, so the history cannot be "
        "checked (a damaged or incomplete object database: run `git fsck`)",
        commit,
    )


# git's %G? letters, for every verdict but G (a good signature by a trusted key)
_SIGNATURE_VERDICTS = {
    "N": ("unsigned", "is not signed"),
    "B": ("bad-signature", "has a bad signature: it was changed after it was signed"),
    "U": (
        "untrusted-signature",
        "is signed by a key this repository does not trust (gpg.ssh.allowedSignersFile, or the key's validity in gpg)",
    ),
    "E": (
        "unverifiable-signature",
        "has a signature that cannot be checked here (the key is missing, or gpg.ssh.allowedSignersFile is not set)",
    ),
    "X": ("expired-signature", "has a signature that has expired"),
    "Y": ("expired-key", "is signed by a key that has expired"),
    "R": ("revoked-key", "is signed by a key that was revoked"),
}


def signature_problems(store: FanoutLog, head: Optional[str] = None) -> tuple:
    """(commits checked, problems) for every commit of the line: git itself checks each
    signature (`git log --format=%G?`, the verdict of `git verify-commit`), with the
    user's trust settings (gpg keyring, gpg.ssh.allowedSignersFile)."""
    head = head or store.head()
    if head is None:
        return 0, []
    proc = store.gr.git(
        ["--no-replace-objects", "log", "--format=%H%x00%G?", "--end-of-options", head, "--"], check=False
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        return 0, [Problem("unverifiable-signature", f"cannot check signatures: {err}")]
    problems, count = [], 0
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        cid, _, verdict = line.partition("\0")
        if len(cid) != 40:
            continue
        count += 1
        if verdict != "G":
            code, what = _SIGNATURE_VERDICTS.get(
                verdict, ("unverifiable-signature", f"has signature status {verdict!r}")
            )
            problems.append(Problem(code, f"commit {abbrev(cid)} {what}"))
    return count, problems


def _shallow_commits(repo: pygit2.Repository, common_dir: Path) -> set[str]:
    """Commits git grafted as history boundaries (empty for a complete clone)."""
    if not repo.is_shallow:
        return set()
    try:
        with open(common_dir / "shallow", encoding="ascii") as f:
            return {line.strip() for line in f if line.strip()}
    except OSError:
        return {"?"}  # shallow but unreadable: refuse to vouch for anything


_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree


def _tree_pair(repo: pygit2.Repository, hide: list, tip: pygit2.Commit) -> Optional[tuple]:
    """(base's root tree, tip's root tree) for git to diff; None when the base cannot be read
    (the trees are then walked from Python, which reports what is missing)."""
    if not hide:
        return _EMPTY_TREE, str(tip.tree_id)
    base = repo.get(hide[0])
    return (str(base.tree_id), str(tip.tree_id)) if isinstance(base, pygit2.Commit) else None
