"""Integrity of a line across its whole history.

Checks (each a problem with a code, so tests and hooks can tell them apart):
* the ref points at a commit, and the repository is not shallow;
* every commit's tree has the documented shape (only `entries/`, fan-out paths);
* every blob parses, its stored id equals its path, and the id recomputes;
* append-only: each commit holds every entry of each of its parents, unchanged,
  except that a merge may pick one of two blobs of the same id by the documented
  rule (earliest ts, then smallest blob id);
* every entry's parents exist in this line or, as external anchors, in another line;
* every value the reflog recorded for the ref is an ancestor of the current head
  (a rewound or rewritten line is caught locally);
* no entry holds what looks like a credential, unless its body records the override
  (`allow-secret:`): the same scan that refuses new entries, so what a client let
  through (an old version, a hand-made commit) is still refused by hooks and pulls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pygit2

from .errors import LifelineError
from .model import Entry
from .store import ENTRIES_DIR, LineStore, diff_entry_trees, is_entry_path


class SecretProblem(str):
    """A blob problem that is a credential found in the entry (problem code `secret`)."""


def blob_problem_code(problem: str) -> str:
    return "secret" if isinstance(problem, SecretProblem) else "bad-entry"


@dataclass
class Problem:
    code: str
    message: str
    commit: Optional[str] = None


@dataclass
class Report:
    line: str
    head: Optional[str]
    entries: int = 0
    commits: int = 0
    problems: list = field(default_factory=list)
    external: list = field(default_factory=list)  # (entry id, parent id, line)
    origins: list = field(default_factory=list)   # (copy id, source id, line): promoted copies, anchored
    unresolved_origins: list = field(default_factory=list)  # origin line/id not in this repository

    @property
    def ok(self) -> bool:
        return not self.problems


def pick_blob(repo: pygit2.Repository, oids: list) -> str:
    """The blob every clone keeps when one id arrives with different non-hashed fields."""
    def key(oid):
        e = Entry.from_json(repo[oid].data)
        return (e.ts, str(oid))
    return str(min(oids, key=key))


class Verifier:
    def __init__(self, store: LineStore):
        self.store = store
        self.repo = store.repo
        self._blob_ok: dict = {}  # blob oid -> (entry id or None, problem or None)

    def _check_blob(self, path: str, oid: pygit2.Oid) -> Optional[str]:
        key = str(oid)
        if key not in self._blob_ok:
            problem = None
            try:
                e = Entry.from_json(self.repo[oid].data)
            except LifelineError as exc:
                problem = f"unreadable entry: {exc}"
            else:
                if not e.verify():
                    problem = f"content does not match its id {e.id[:12]} (tampered)"
                elif e.id != path.replace("/", ""):
                    problem = f"entry {e.id[:12]} is stored under another id's path (renamed)"
                else:
                    problem = _secret_problem(e)
            self._blob_ok[key] = problem
        return self._blob_ok[key]

    def _entries_tree(self, commit: pygit2.Commit, report: Report) -> Optional[pygit2.Tree]:
        tree = commit.tree
        for item in tree:
            if item.name != ENTRIES_DIR or item.type_str != "tree":
                report.problems.append(Problem("foreign-file", f"unexpected '{item.name}' at the root of the tree",
                                               str(commit.id)))
        if ENTRIES_DIR in tree and tree[ENTRIES_DIR].type_str == "tree":
            return self.repo[tree[ENTRIES_DIR].id]
        return None

    def run(self) -> Report:
        store = self.store
        head = store.head()
        report = Report(store.line, head)
        if self.repo.is_shallow:
            report.problems.append(Problem(
                "shallow", "this is a shallow clone: its history is incomplete, so the ledger cannot be vouched "
                           "for (run: git fetch --unshallow)"))
            return report
        if head is None:
            return report
        obj = self.repo.get(head)
        if obj is None:
            report.problems.append(_missing(KeyError(head)))
            return report
        if not isinstance(obj, pygit2.Commit):
            report.problems.append(Problem("bad-ref", f"{store.ref_name} points at a {obj.type_str}, not a commit"))
            return report
        try:
            walker = self.repo.walk(obj.id, pygit2.GIT_SORT_TOPOLOGICAL | pygit2.GIT_SORT_REVERSE)
            commits = list(walker)
        except (KeyError, pygit2.GitError) as exc:
            report.problems.append(_missing(exc))
            return report
        for commit in commits:
            report.commits += 1
            try:
                self._check_commit(commit, report)
            except KeyError as exc:
                report.problems.append(_missing(exc, str(commit.id)))
        try:
            loaded = store.load(head)
        except KeyError as exc:
            report.problems.append(_missing(exc))
        else:
            report.entries = len(loaded.entries)
            self._check_parents(loaded.entries, report)
        self._check_reflog(obj, report)
        unique, seen = [], set()
        for p in report.problems:
            if (p.code, p.message) not in seen:
                seen.add((p.code, p.message))
                unique.append(p)
        report.problems = unique
        return report

    def _entries_tree_quiet(self, commit):
        tree = commit.tree
        if ENTRIES_DIR in tree and tree[ENTRIES_DIR].type_str == "tree":
            return self.repo[tree[ENTRIES_DIR].id]
        return None

    def _check_commit(self, commit: pygit2.Commit, report: Report) -> None:
        cid = str(commit.id)
        new_tree = self._entries_tree(commit, report)
        parents = commit.parents
        bases = [self._entries_tree_quiet(p) for p in parents] or [None]
        for idx, base in enumerate(bases):
            for path, old, new, kind in diff_entry_trees(self.repo, base, new_tree):
                full = f"{ENTRIES_DIR}/{path}"
                if new is not None and (kind != "blob" or not is_entry_path(path)):
                    report.problems.append(Problem("foreign-file", f"{full} is not an entry blob", cid))
                    continue
                if old is not None and new is None:
                    if is_entry_path(path):
                        report.problems.append(Problem(
                            "removed", f"entry {path.replace('/', '')[:12]} was removed (history must only grow)", cid))
                    continue
                if new is not None:
                    problem = self._check_blob(path, new)
                    if problem:
                        report.problems.append(Problem(blob_problem_code(problem), f"{full}: {problem}", cid))
                        continue
                if old is not None and new is not None:
                    if not self._merge_pick_ok(commit, path, new):
                        report.problems.append(Problem(
                            "rewritten", f"entry {path.replace('/', '')[:12]} was rewritten in place", cid))

    def _merge_pick_ok(self, commit: pygit2.Commit, path: str, new: pygit2.Oid) -> bool:
        if len(commit.parents) < 2:
            return False
        candidates = []
        for p in commit.parents:
            t = self._entries_tree_quiet(p)
            if t is not None:
                try:
                    candidates.append(t[path].id)
                except KeyError:
                    pass
        if new not in candidates:
            return False
        try:
            return pick_blob(self.repo, candidates) == str(new)
        except LifelineError:
            return False

    def _check_parents(self, entries: dict, report: Report) -> None:
        # Only the repository's real lines count (lines.LineIndex: refs/lifeline/<name> whose
        # head has the ledger's shape), and only a blob that recomputes to the parent's id:
        # no stray file, branch, foreign ref or renamed blob can excuse a missing parent.
        from .lines import LineIndex, check_origins
        index = LineIndex.scan(self.store.gr)
        for e in entries.values():
            for p in e.parents:
                if p in entries:
                    continue
                home = index.locate(p, exclude=self.store.line)
                if home:
                    report.external.append((e.id, p, home))
                else:
                    report.problems.append(Problem(
                        "missing-parent", f"entry {e.id[:12]} names parent {p[:12]}, which no line holds"))
        anchored, unresolved, forged = check_origins(index, entries.values())
        report.origins = anchored
        report.unresolved_origins = unresolved
        for copy, source, line in forged:
            report.problems.append(Problem(
                "bad-origin", f"entry {copy[:12]} names origin {line}:{source[:12]} but does not match that entry"))

    def _check_reflog(self, head: pygit2.Commit, report: Report) -> None:
        try:
            ref = self.repo.lookup_reference(self.store.ref_name)
            log = list(ref.log())
        except (KeyError, pygit2.GitError):
            return
        for item in log:
            old = item.oid_new
            if old == head.id or int(str(old), 16) == 0:
                continue
            try:
                ok = self.repo.descendant_of(head.id, old)
            except pygit2.GitError:
                ok = False
            if not ok:
                report.problems.append(Problem(
                    "rewound", f"{self.store.ref_name} once pointed at {str(old)[:12]}, which the current head "
                               "does not contain: the line was rewound or rewritten"))
                break


# git's %G? letters, for every verdict but G (a good signature by a trusted key)
_SIGNATURE_VERDICTS = {
    "N": ("unsigned", "is not signed"),
    "B": ("bad-signature", "has a bad signature: it was changed after it was signed"),
    "U": ("untrusted-signature", "is signed by a key this repository does not trust "
                                 "(gpg.ssh.allowedSignersFile, or the key's validity in gpg)"),
    "E": ("unverifiable-signature", "has a signature that cannot be checked here (the key is missing, "
                                    "or gpg.ssh.allowedSignersFile is not set)"),
    "X": ("expired-signature", "has a signature that has expired"),
    "Y": ("expired-key", "is signed by a key that has expired"),
    "R": ("revoked-key", "is signed by a key that was revoked"),
}


def signature_problems(store: LineStore, head: Optional[str] = None) -> tuple:
    """(commits checked, problems) for every commit of the line: git itself checks each
    signature (`git log --format=%G?`, the verdict of `git verify-commit`), with the
    user's trust settings (gpg keyring, gpg.ssh.allowedSignersFile)."""
    head = head or store.head()
    if head is None:
        return 0, []
    proc = store.gr.git(["log", "--format=%H%x00%G?", head, "--"], check=False)
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
            code, what = _SIGNATURE_VERDICTS.get(verdict, ("unverifiable-signature", f"has signature status {verdict!r}"))
            problems.append(Problem(code, f"commit {cid[:12]} {what}"))
    return count, problems


def _missing(exc: BaseException, commit: Optional[str] = None) -> Problem:
    what = exc.args[0] if exc.args else exc
    return Problem("missing-object", f"object {what} is missing from the repository, so the history cannot be "
                                     "checked (a damaged or incomplete object database: run `git fsck`)", commit)


def _secret_problem(e: Entry) -> Optional[SecretProblem]:
    from .secrets import entry_findings
    findings = entry_findings(e)
    if not findings:
        return None
    shown = "; ".join(f.describe() for f in findings[:3]) + (" ..." if len(findings) > 3 else "")
    return SecretProblem(f"entry {e.id[:12]} holds what looks like a credential ({shown}); rotate it, "
                         "it is in the line's history")


def verify_line(store: LineStore) -> Report:
    return Verifier(store).run()
