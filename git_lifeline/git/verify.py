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
from typing import Callable, Iterable, Iterator, Mapping, Optional

from ..core.entry import abbrev
from ..errors import LifelineError
from .checks import Problem, Report, Verifier, checks_for
from .fanout import CorruptionError, FanoutLog, Progress, StoredRecord, clash_message, name_clashes, no_progress
from .libgit2 import pygit2
from .namespaces import LEDGER, REVIEW, names_in_use
from .refs import rewound_value
from .repo import GitRepo
from .trees import ProgressBar, bar_of, is_entry_path
from .verdicts import VerdictMemo
from .verify_diff import EMPTY_TREE, DiffKey, HistoryUnreadable, TreeChange, TreePair, diff_commits
from .verify_names import TipNames


def verify_range(
    log: FanoutLog,
    tip: str,
    hide: Iterable[Optional[str]] = (),
    progress: Optional[Callable[[int], ProgressBar]] = None,
    pending: Optional[dict[str, str]] = None,
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
    the entry (kept.Kept).
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
    bar = progress(len(commits)) if progress is not None else None
    by_id = {str(c.id): c for c in commits}
    # What the range adds in all (base tree -> tip tree): the same git process diffs it,
    # unless the range is one commit on top of the base, whose own diff is that.
    one_step = len(commits) == 1 and [str(p) for p in commits[0].parent_ids] == [str(h) for h in hide[:1]]
    pair = None if one_step else _tree_pair(repo, hide, obj)
    whole_key: Optional[DiffKey] = str(commits[0].id) if one_step else pair
    problems_before = len(report.problems)
    checks = checks_for(log, hide, pending, memo, keep_records)
    walk = _Walk(log, checks, by_id, report, bar)
    whole = _Whole(log, checks, tip, lambda: _changes_of(log, commits, pair, whole_key)) if whole_key else None
    try:
        _walk_diffs(walk, whole, whole_key, diff_commits(log.gr, list(by_id), pair, _roots(commits)), pair)
    except HistoryUnreadable as exc:
        # git could not read the history: nothing it printed is walked (as if it printed
        # nothing), and what the tip adds is read from the trees themselves
        del report.problems[problems_before:]
        checks = checks_for(log, hide, pending, memo, keep_records)
        whole = None
        report.problems.append(
            Problem(
                "missing-object",
                f"the history cannot be read ({exc}): a damaged or incomplete object database (run `git fsck`)",
            )
        )
    try:
        if whole is None:  # git could not diff the trees: what the tip adds, from the trees themselves
            tip_tree = log.tree(tip)
            checks.collect_trees(log.tree(hide[0]) if hide else None, tip_tree)
        else:
            tip_tree = whole.tip_tree()
            report.problems.extend(whole.name_problems())
            whole.collected()
        checks.finish_range(report, tip_tree)
    except KeyError as exc:
        report.problems.append(_missing(exc))
    report.problems = _unique(report.problems)
    return report


# Changes judged together: their blobs read by one `git cat-file --batch` (Checks.preload),
# then walked and dropped, so that memory follows this, not the range.
_GROUP = 1 << 16


def _walk_diffs(
    walk: _Walk,
    whole: Optional[_Whole],
    whole_key: Optional[DiffKey],
    diffs: Iterator[tuple[DiffKey, list[TreeChange], bool]],
    pair: Optional[TreePair],
) -> None:
    """Walk git's diff of the range as it comes, a group of changes at a time: each
    commit's changes (the shape and append-only rules, each blob judged), and what the
    range adds in all (`whole_key`'s changes: the tip's names and records)."""
    group: list[tuple[DiffKey, list[TreeChange], bool]] = []
    size = 0
    for piece in diffs:
        group.append(piece)
        size += len(piece[1])
        if size >= _GROUP:
            _walk_group(walk, whole, whole_key, group, pair)
            group, size = [], 0
    _walk_group(walk, whole, whole_key, group, pair)


def _walk_group(
    walk: _Walk,
    whole: Optional[_Whole],
    whole_key: Optional[DiffKey],
    group: list[tuple[DiffKey, list[TreeChange], bool]],
    pair: Optional[TreePair],
) -> None:
    walk.checks.preload([changes for _key, changes, _more in group])
    if whole is not None:
        whole.read_ahead([changes for key, changes, _more in group if key == whole_key])
    for key, changes, more in group:
        if key != pair and isinstance(key, str):
            walk.commit(key, changes, more)
        if whole is not None and key == whole_key:
            whole.take(changes)


def _changes_of(
    log: FanoutLog, commits: list[pygit2.Commit], pair: Optional[TreePair], whole_key: DiffKey
) -> Iterator[list[TreeChange]]:
    """`whole_key`'s changes again, from git (only for a tree that names a path twice)."""
    ids = [str(c.id) for c in commits] if pair is None else []
    for key, changes, _more in diff_commits(log.gr, ids, pair, _roots(commits)):
        if key == whole_key:
            yield changes


class _Walk:
    """Each commit's changes, against each parent, in history order (the shape and
    append-only rules, each blob judged by the namespace's checks)."""

    def __init__(
        self,
        log: FanoutLog,
        checks: Verifier,
        by_id: dict[str, pygit2.Commit],
        report: Report,
        bar: Optional[ProgressBar],
    ):
        self.log, self.checks, self.by_id, self.report, self.bar = log, checks, by_id, report, bar
        self._stopped = False  # a missing object stopped this diff's walk

    def commit(self, cid: str, changes: list[TreeChange], more: bool) -> None:
        """One piece of the diff of `cid` against one parent (`more`: the rest of a diff
        already begun)."""
        if not more:
            self._stopped = False
            if self.bar is not None:
                self.bar.update(1)
        if self._stopped:
            return
        try:
            for status, new_mode, new_oid, path in changes:
                _check_change(self.log, self.checks, self.by_id[cid], status, new_mode, new_oid, path, self.report)
        except KeyError as exc:
            self.report.problems.append(_missing(exc, cid))
            self._stopped = True


class _Whole:
    """What the range adds in all, from git's diff of the base and tip trees, taken as it
    comes: the records (`added`) and each added path checked where a reader finds it
    (`name_problems`). Each blob's verdict is let go once its record is taken."""

    def __init__(self, log: FanoutLog, checks: Verifier, tip: str, again: Callable[[], Iterator[list[TreeChange]]]):
        self.log, self.checks, self.tip = log, checks, tip
        self._failed: Optional[KeyError] = None  # a blob that could not be read: no records
        self._tree: Optional[pygit2.Tree] = None
        self._tree_failed: Optional[KeyError] = None
        self._names: Optional[TipNames] = None
        self._again = again
        self._read = False

    def tip_tree(self) -> Optional[pygit2.Tree]:
        """The tip's tree dir (KeyError: missing, as when it was read first)."""
        self._open()
        if self._tree_failed is not None:
            raise self._tree_failed
        return self._tree

    def _open(self) -> None:
        if self._read:
            return
        self._read = True
        try:
            self._tree = self.log.tree(self.tip)
        except KeyError as exc:
            self._tree_failed = exc
            return
        self._names = TipNames(self.log, self._tree)

    def read_ahead(self, pieces: list[list[TreeChange]]) -> None:
        self._open()
        if self._names is not None and pieces:
            self._names.read_ahead(pieces)

    def take(self, changes: list[TreeChange]) -> None:
        self._open()
        if self._names is not None:
            self._names.check(changes)
        if self._failed is None and self._tree_failed is None:
            try:
                _add_from_changes(self.log, self.checks, changes)
            except KeyError as exc:
                self._failed = exc

    def name_problems(self) -> list[Problem]:
        self._open()
        return self._names.problems(self._again) if self._names is not None else []

    def collected(self) -> None:
        """KeyError when a blob of what the range adds could not be read (nothing counted)."""
        self.tip_tree()
        if self._failed is not None:
            raise self._failed


def _add_from_changes(log: FanoutLog, checks: Verifier, changes: list[TreeChange]) -> None:
    """Checks.collect_trees, from git's diff of the two trees ([(status, new mode, new oid,
    path)], as verify reads `git diff-tree -r`): the same records, without walking the trees."""
    prefix = log.ns.tree_dir + "/"
    for status, mode, new, path in changes:
        if status == "D" or mode not in _BLOB_MODES or not path.startswith(prefix):
            continue
        rel = path[len(prefix) :]
        if not is_entry_path(rel):
            continue
        checks.collect(rel, new)


_BLOB_MODES = frozenset({"100644", "100755", "120000"})  # what git stores as a blob


def verified_incoming(
    log: FanoutLog,
    local: Optional[str],
    theirs: str,
    source: str,
    progress: Progress = no_progress,
    pending: Optional[dict[str, str]] = None,
) -> Mapping[str, StoredRecord]:
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
            progress=lambda total: bar_of(stack.enter_context(progress(label, total))),
        )
    if not report.ok:
        raise CorruptionError(
            f"{log.ns.noun} {log.name} from {source} failed verification; nothing was changed:",
            *problem_lines(report.problems),
        )
    return report.added


def problem_lines(problems: list[Problem], limit: int = 20) -> list[str]:
    """The problems as indented lines (`  code: message (commit abc)`), at most `limit`:
    lines of an error's message (errors.LifelineError), one each."""
    shown = [f"  {p.describe()}" for p in problems[:limit]]
    return shown + ([f"  ... and {len(problems) - limit} more"] if len(problems) > limit else [])


def verify_log(log: FanoutLog, in_use: Optional[set[str]] = None) -> Report:
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


def verify_trail(gr: GitRepo, line: str, commit: Optional[str] = None, in_use: Optional[set[str]] = None) -> Report:
    """`git lifeline verify` for the review trail of `line`; with `commit`, the whole
    history of that commit instead of the ref (no reflog: it is not the ref's)."""
    trail = FanoutLog(gr, REVIEW, line)
    if commit is None:
        return verify_log(trail, in_use)
    return verify_range(trail, commit, ())


def _check_change(
    log: FanoutLog,
    checks: Verifier,
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
    problem = checks.blob(rel, new_oid)
    if problem:
        code, why = problem
        report.problems.append(Problem(code, f"{path}: {why}", cid))
        return
    if status != "A":
        if not _merge_pick_ok(log, commit, rel, pygit2.Oid(hex=new_oid)):
            report.problems.append(
                Problem("rewritten", f"{log.ns.item} {abbrev(rel.replace('/', ''))} was rewritten in place", cid)
            )
        else:
            checks.changed_at(commit, rel, new_oid, report)
        return
    checks.added_at(commit, rel, new_oid, report)


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


def _unique(problems: list[Problem]) -> list[Problem]:
    """Problems in order, each (code, message) once (a merge is diffed against each parent)."""
    out: list[Problem] = []
    seen: set[tuple[str, str]] = set()
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


def signature_problems(store: FanoutLog, head: Optional[str] = None) -> tuple[int, list[Problem]]:
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


def _roots(commits: list[pygit2.Commit]) -> dict[str, str]:
    """commit -> its tree, for the commits of the range that have no parent."""
    return {str(c.id): str(c.tree_id) for c in commits if not c.parent_ids}


def _tree_pair(repo: pygit2.Repository, hide: list[str], tip: pygit2.Commit) -> Optional[TreePair]:
    """(base's root tree, tip's root tree) for git to diff; None when the base cannot be read
    (the trees are then walked from Python, which reports what is missing)."""
    if not hide:
        return EMPTY_TREE, str(tip.tree_id)
    base = repo.get(hide[0])
    return (str(base.tree_id), str(tip.tree_id)) if isinstance(base, pygit2.Commit) else None
