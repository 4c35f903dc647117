"""One storage engine for every log we keep in git: a `FanoutLog` over a `Namespace`.

A namespace is a family of refs (`refs/lifeline/<line>`, `refs/lifeline-review/<line>`),
each pointing at a commit whose tree holds one directory (`entries/`, `records/`) of
content-addressed blobs in a two-level fan-out (trees.py). Every commit's tree is the
full snapshot of the log, so a merge is a union, and the ref only ever moves by
compare-and-swap, with a reflog. What a namespace means is given by its `Namespace`:
how a blob parses into a record, which id a record proves, how a merge picks between
two blobs of one id. Everything else (reading, prefix resolution, appending under the
writers' lock with retries, stale `<ref>.lock` recovery, read-back of what was
written, the union of two heads) is here, once; integrate.py brings another clone's
head in with it.

The namespaces themselves are defined in namespaces.py; a log of the ledger is a
`store.LineStore`, a review trail a `trails.ReviewTrail`.
"""

from __future__ import annotations

import os
import random
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Generic, Iterable, Iterator, Optional, Protocol, TypeVar

from ..core.entry import abbrev
from ..errors import ConflictError, InputError, IntegrityError, LifelineError, RepositoryError
from .fs import file_lock
from .libgit2 import pygit2
from .names import NAME_RE, validate_name
from .refs import HEX40, cas_ref, drop_phantom_reflog, ensure_reflog, make_commit
from .repo import GitRepo
from .trees import (
    NullProgress,
    TreeGain,
    TreeLookup,
    Union,
    bar_of,
    blob_data,
    commit_at,
    entry_path,
    insert_fanout,
    is_entry_path,
    lookup,
    name_of,
    prefix_matches,
    tree_at,
    tree_gain,
    union_trees,
)

CAS_ATTEMPTS = 64
CAS_SECONDS = 30.0  # writers queue on the log's lock; CAS retries only race outside writers
STALE_REF_LOCK_SECONDS = 5  # a ref update holds <ref>.lock for milliseconds
_LOOSE_SAMPLE_DIR = "17"  # git gc --auto estimates loose objects from this one fan-out dir
_LOOSE_SAMPLE_LIMIT = 27  # ~ gc.auto (6700) / 256


def name_key(name: str) -> str:
    """What two line names must not share (docs/FORMAT.md §4): the name after NFKC, case
    folded. A case-insensitive file system (macOS, Windows) keeps a loose ref as a file, so
    `Main` and `main` would be one ref there, one projection file, one cache and one lock."""
    return unicodedata.normalize("NFKC", name).casefold()


def name_clashes(present: Iterable[str], arriving: Iterable[str]) -> dict[str, str]:
    """The one check of line names, for every write and every gate: {name: the other name it
    clashes with} for each name of `arriving` that is not in `present` and whose name_key
    is that of a different name, present or arriving. `present` is every name in use where
    the names would land (in every ref family: a line and its review trail share a name);
    `arriving`, the names that would land there. A name already present is never refused
    for its case; two new names that clash are both refused (neither is the right one)."""
    here = set(present)
    new = sorted(set(arriving) - here)
    by_key: dict[str, list[str]] = {}
    for name in sorted(here) + new:
        by_key.setdefault(name_key(name), []).append(name)
    out = {}
    for name in new:
        others = [o for o in by_key[name_key(name)] if o != name]
        if others:
            out[name] = others[0]
    return out


def clash_message(name: str, other: str) -> str:
    return (
        f"line name {name!r} differs from line {other!r} only in case: a case-insensitive file system "
        "(macOS, Windows) keeps both as one ref, so one would read or overwrite the other"
    )


class CorruptionError(IntegrityError):
    """What a remote sent (or what is here) fails verification; nothing was moved."""


class StoredRecord(Protocol):
    """What the walk reads of any record a namespace stores: the id it is stored under."""

    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=StoredRecord)  # a namespace's record: a ledger's Entry, a trail's Record


@dataclass(frozen=True)
class Namespace(Generic[R]):
    """One family of logs. The strings name things in messages; the callables say what a
    blob means. `pick(repo, blob oids)` is the blob every clone keeps when one id arrives
    with different bytes (None: the ids are hashes of the bytes, so that is corruption)."""

    name: str  # the key loops use: "ledger", "review"
    ref_prefix: str  # refs/lifeline/
    tree_dir: str  # entries
    tracking: str  # refs/remotes/<remote>/<tracking>/<name>
    label: str  # reflog and commit label: lifeline, lifeline-review
    lock_file: str  # under the lifeline dir, formatted with name=
    noun: str  # one log, in messages: "line", "review trail"
    thing: str  # what deleting removes: "ledger line", "review trail"
    whole: str  # the family: "ledger", "review trail"
    item: str  # one record: "entry", "record"
    items: str  # plural
    push_prefix: str  # PushLine names: "" or "review:"
    parse: Callable[[bytes], R]  # blob bytes -> record; raises LifelineError
    key: Callable[[R], str]  # the id a record claims
    proves: Callable[[R], bool]  # its content recomputes to that id
    pick: Optional[Callable[[pygit2.Repository, list[pygit2.Oid]], str]] = None
    # every line name in use in the repository, in every family (namespaces.names_in_use):
    # what a new log's name must not clash with (name_clashes); None: this family's names
    names_in_use: Optional[Callable[[GitRepo], set[str]]] = None

    def ref(self, name: str) -> str:
        return self.ref_prefix + name

    def tracking_prefix(self, remote: str) -> str:
        return f"refs/remotes/{remote}/{self.tracking}/"

    def fetch_refspec(self, remote: str) -> str:
        return f"+{self.ref_prefix}*:{self.tracking_prefix(remote)}*"

    def branch_exclusion(self) -> str:
        """The negative refspec that keeps a remote's code branches named `<tracking>/*` out of
        a plain `git fetch`: git's default refspec (`refs/heads/*:refs/remotes/<remote>/*`)
        would fetch them into our tracking refs, and with fetch_refspec configured too git
        refuses the whole fetch ("Cannot fetch both ..."), code included."""
        return f"^refs/heads/{self.tracking}/*"

    def names(self, gr: GitRepo) -> list[str]:
        """Names of the repository's logs of this namespace (valid names only), sorted."""
        out = []
        for ref in gr.repo.references.iterator():
            if ref.name.startswith(self.ref_prefix) and NAME_RE.fullmatch(ref.name[len(self.ref_prefix) :]):
                out.append(ref.name[len(self.ref_prefix) :])
        return sorted(out)

    def tracking_heads(self, gr: GitRepo, remote: str) -> dict[str, str]:
        """{name: commit} of a remote's logs as last fetched."""
        prefix = self.tracking_prefix(remote)
        out = {}
        for ref in gr.repo.references.iterator():
            if ref.name.startswith(prefix):
                name, target = ref.name[len(prefix) :], ref.target
                if NAME_RE.fullmatch(name) and isinstance(target, pygit2.Oid):
                    out[name] = str(target)
        return out


@dataclass
class Loaded(Generic[R]):
    """Records read from one commit, plus whatever could not be read as one."""

    records: dict[str, R] = field(default_factory=dict)  # id -> record
    blobs: dict[str, str] = field(default_factory=dict)  # id -> blob oid (hex)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, message)

    @property
    def entries(self) -> dict[str, R]:
        return self.records


@dataclass
class AppendResult(Generic[R]):
    added: list[R]  # records newly written
    existing: list[R]  # records already present (idempotent no-op)
    commit: Optional[str]  # the new head, or None when nothing was written
    # The head the commit was built on (its parent). Not the head a caller saw before
    # asking: another writer may have appended in between, and a view extended from what
    # the caller saw would miss that writer's entries while naming the new head.
    parent: Optional[str] = None


# progress(label, total) -> a context giving a ProgressBar (trees.bar_of); faces choose the display
Progress = Callable[[str, int], ContextManager[object]]


def no_progress(label: str, total: int) -> NullProgress:
    return NullProgress()


def union_of(
    repo: pygit2.Repository,
    ns: Namespace,
    ours: Optional[pygit2.Tree],
    theirs: Optional[pygit2.Tree],
    progress: Optional[object] = None,  # what a Progress context gave (bar_of)
) -> Union:
    """The union of two trees of a namespace; one id with two blobs is settled by the
    namespace's pick rule, or reported as corruption."""

    def pick(key: str, a: pygit2.Object, b: pygit2.Object, result: Union) -> Optional[pygit2.Oid]:
        for side, leaf in (("local", a), ("remote", b)):
            try:
                rec = ns.parse(blob_data(repo, leaf.id))
            except LifelineError as exc:
                result.corrupt.append((key, f"the {side} copy is unreadable: {exc}"))
                return None
            if ns.key(rec) != key or not ns.proves(rec):
                result.corrupt.append((key, f"the {side} copy's content does not match its id"))
                return None
        if ns.pick is None:
            result.corrupt.append((key, "holds two different blobs"))
            return None
        # Both recompute to the same id, so every hashed field is equal: the namespace's
        # rule picks one blob, the same on every clone.
        kept = pygit2.Oid(hex=ns.pick(repo, [a.id, b.id]))
        result.picked.append((key, str(kept), str(b.id if kept == a.id else a.id)))
        return kept

    return union_trees(repo, ours, theirs, pick, bar_of(progress) if progress is not None else None)


class FanoutLog(Generic[R]):
    """Reads and appends one log: the ref `ns.ref_prefix + name`."""

    def __init__(self, gr: GitRepo, ns: Namespace[R], name: str):
        self.gr = gr
        self.repo: pygit2.Repository = gr.repo
        self.ns = ns
        self.name = validate_name(name)
        self.ref_name = ns.ref(name)

    # ---- reading ---------------------------------------------------------------------
    def head(self) -> Optional[str]:
        try:
            ref = self.repo.lookup_reference(self.ref_name)
        except (KeyError, pygit2.InvalidSpecError):
            return None
        target = ref.target
        if not isinstance(target, pygit2.Oid):
            raise LifelineError(f"{self.ref_name} is a symbolic ref; a {self.ns.noun} ref must point at a commit")
        return str(target)

    def tree(self, commit_id: Optional[str]) -> Optional[pygit2.Tree]:
        """The `<tree_dir>/` tree of a commit (None for an empty log)."""
        if commit_id is None:
            return None
        obj = self.repo[commit_id]
        if not isinstance(obj, pygit2.Commit):
            raise LifelineError(f"{self.ref_name} points at a {obj.type_str}, not a commit")
        root = obj.tree
        if self.ns.tree_dir not in root or root[self.ns.tree_dir].type_str != "tree":
            return None
        sub = self.repo[root[self.ns.tree_dir].id]
        return sub if isinstance(sub, pygit2.Tree) else None

    def tree_id(self, commit_id: Optional[str]) -> Optional[str]:
        tree = self.tree(commit_id)
        return str(tree.id) if tree is not None else None

    def _at(self, commit_id: Optional[str]) -> Optional[pygit2.Tree]:
        return self.tree(commit_id if commit_id else self.head())

    def has(self, key: str, commit_id: Optional[str] = None) -> bool:
        return lookup(self._at(commit_id), key) is not None

    def read(self, key: str, commit_id: Optional[str] = None) -> Optional[R]:
        """The record stored under `key` (parsed, not checked against its id), or None."""
        oid = lookup(self._at(commit_id), key)
        return self.ns.parse(blob_data(self.repo, oid)) if oid is not None else None

    def prefix_matches(self, prefix: str, commit_id: Optional[str] = None) -> list[str]:
        """Full ids starting with `prefix` (the one id-prefix resolution of every log)."""
        return prefix_matches(self.repo, self._at(commit_id), prefix)

    def iter_blobs(self, commit_id: Optional[str] = None) -> Iterator[tuple[str, str, Optional[pygit2.Object]]]:
        """(path, id-from-path, object) for every object under the tree dir."""
        tree = self.tree(commit_id if commit_id is not None else self.head())
        if tree is None:
            return
        for a in tree:
            sub_a, na = self._object(a), name_of(a)
            if not isinstance(sub_a, pygit2.Tree):
                yield na, na, sub_a
                continue
            for b in sub_a:
                sub_b, nb = self._object(b), name_of(b)
                if not isinstance(sub_b, pygit2.Tree):
                    yield f"{na}/{nb}", na + nb, sub_b
                    continue
                for c in sub_b:
                    nc = name_of(c)
                    yield f"{na}/{nb}/{nc}", na + nb + nc, self._object(c)

    def iter_oids(self, commit_id: Optional[str] = None) -> Iterator[tuple[str, str]]:
        """(id from path, blob oid) of every blob at an id's place, without reading blobs."""
        tree = self.tree(commit_id if commit_id is not None else self.head())
        if tree is None:
            return
        for a in tree:
            if a.type_str != "tree":
                continue
            for b in tree_at(self.repo, a.id):
                if b.type_str != "tree":
                    continue
                for c in tree_at(self.repo, b.id):
                    if c.type_str == "blob":
                        yield name_of(a) + name_of(b) + name_of(c), str(c.id)

    def _object(self, item: pygit2.Object) -> Optional[pygit2.Object]:
        """The object a tree entry names; None for a gitlink (its commit lives in another repo)."""
        return self.repo[item.id] if item.type_str in ("tree", "blob") else None

    def check_blob(self, path: str, obj: Optional[pygit2.Object]) -> tuple[Optional[R], Optional[str]]:
        """(record, None) for a readable record stored under its own id, else (None, why)."""
        return self.check_data(path, obj.data) if isinstance(obj, pygit2.Blob) else (None, "not a blob")

    def check_data(self, path: str, data: bytes) -> tuple[Optional[R], Optional[str]]:
        """check_blob of a blob's bytes (read by git cat-file: store.LineStore.stream)."""
        if not is_entry_path(path):
            return None, f"path is not {'an' if self.ns.item[:1] in 'aeiou' else 'a'} {self.ns.item} id"
        try:
            rec = self.ns.parse(data)
        except LifelineError as exc:
            return None, f"unreadable {self.ns.item}: {exc}"
        key = self.ns.key(rec)
        if key != path.replace("/", ""):
            return None, f"stored id {abbrev(key)} differs from its path"
        return rec, None

    def load(self, commit_id: Optional[str] = None) -> Loaded[R]:
        """Every readable record of a commit (default: head); bad blobs become problems."""
        result: Loaded[R] = Loaded()
        for path, pid, obj in self.iter_blobs(commit_id):
            rec, problem = self.check_blob(path, obj)
            if problem is not None or obj is None or rec is None:  # check_blob gives one or the other
                result.problems.append((f"{self.ns.tree_dir}/{path}", problem or "not a blob"))
                continue
            result.records[pid] = rec
            result.blobs[pid] = str(obj.id)
        return result

    # ---- writing ---------------------------------------------------------------------
    def clash(self) -> Optional[str]:
        """The line name in use that this log's name clashes with (name_clashes) while this
        name is not in use itself, else None.

        Only a name not in use can clash, and a lookup answers that for nothing where the
        file system tells case apart: there a ref found by its exact name is in use, and
        every ref is listed only when it is not (at 5,000 refs the listing costs ~3 ms
        packed, ~65 ms loose, on every append it was made for). Where the file system
        ignores case (git's init and clone probe it and set core.ignorecase), a lookup of
        `Main` finds the file of `main`, so the names are always read from the listing."""
        if not self.gr.config_bool("core.ignorecase", False) and self._exists():
            return None
        taken = self.ns.names_in_use(self.gr) if self.ns.names_in_use else set(self.ns.names(self.gr))
        return name_clashes(taken, [self.name]).get(self.name)

    def _exists(self) -> bool:
        try:
            self.repo.lookup_reference(self.ref_name)
        except (KeyError, pygit2.InvalidSpecError):
            return False
        return True

    def refuse_clash(self) -> None:
        """InputError when this log's name clashes with a line name in use (clash): no
        write creates it and no read takes the other line's ref for it. The one refusal
        of a clashing name, for every write and every read of a named line."""
        other = self.clash()
        if other is not None:
            raise InputError(
                f"{self.ns.noun} {self.name!r} cannot be used: {clash_message(self.name, other)}; "
                f"use that line (--line {other}; the default line is git config "
                "lifeline.defaultLine) or another name. Nothing was read or written under that name"
            )

    def insert(self, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
        """New tree = base + blobs {id: blob oid}; rewrites only touched subtrees."""
        return insert_fanout(self.repo, base, blobs)

    def root_tree(self, sub_tree: pygit2.Oid) -> pygit2.Oid:
        tb = self.repo.TreeBuilder()
        tb.insert(self.ns.tree_dir, sub_tree, pygit2.GIT_FILEMODE_TREE)
        return tb.write()

    def write_lock(self, wait: bool = True) -> ContextManager[None]:
        """Serialises this repository's writers of the log (append, import, pull merge);
        `wait=False`: fs.LockHeld instead of queueing."""
        return file_lock(self.gr.lifeline_dir() / self.ns.lock_file.format(name=self.name), wait)

    def signature(self, when: int) -> pygit2.Signature:
        name, email = self.gr.identity()
        return pygit2.Signature(name, email, when, 0)

    def write_commit(self, message: str, tree: pygit2.Oid, parents: list[pygit2.Oid], when: int) -> pygit2.Oid:
        """A commit of this log at `when` (UTC), signed when git's config asks (make_commit)."""
        return make_commit(self.gr, message, tree, parents, self.signature(when))

    def resign(self, commit_id: str) -> str:
        """A commit made elsewhere (fast-import) re-made by `write_commit`: the same tree,
        parents, message and time, signed when git's config asks for it."""
        if not self.gr.config_bool("commit.gpgsign", False):
            return commit_id
        c = commit_at(self.repo, commit_id)
        return str(self.write_commit(c.message, c.tree_id, list(c.parent_ids), c.committer.time))

    def add(
        self,
        records: list,
        message_for: Callable[[list], str],
        *,
        existing: Optional[Callable[[R, Optional[str]], bool]] = None,
        check: Optional[Callable[[Optional[str]], None]] = None,
        reflog: Optional[Callable[[list], str]] = None,
    ) -> AppendResult[R]:
        """Append records (objects with `id`, `ts` and `to_json()`) in one commit, under the
        writers' lock, by compare-and-swap, retried. Records already present are skipped,
        so adding twice is a no-op.

        `message_for(new)` builds the commit message from what is really new;
        `existing(record, head)` may report a record as present by another rule (a dedup
        key); `check(head)` runs against the head each attempt builds on and may raise to
        refuse the write (a second decision on a proposal, even from another process)."""
        if not records:
            return AppendResult([], [], None)
        self.gr.identity()  # fail before writing anything when git has no identity
        self.refuse_clash()
        with self.write_lock():
            return self._add_locked(records, message_for, existing, check, reflog)

    def _add_locked(
        self,
        records: list,
        message_for: Callable[[list], str],
        existing: Optional[Callable[[R, Optional[str]], bool]],
        check: Optional[Callable[[Optional[str]], None]],
        reflog: Optional[Callable[[list], str]],
    ) -> AppendResult[R]:
        blob_oids = {r.id: self.repo.create_blob(r.to_json()) for r in records}
        ensure_reflog(self.gr, self.ref_name)
        deadline = time.monotonic() + CAS_SECONDS
        attempt = 0
        while True:
            attempt += 1
            head = self.head()
            if check is not None:
                check(head)
            base = TreeLookup(self.tree(head))
            new, present = [], []
            seen = set()
            for r in records:
                if r.id in seen:
                    continue
                seen.add(r.id)
                if base.find(r.id) is not None or (existing and existing(r, head)):
                    present.append(r)
                else:
                    new.append(r)
            if not new:
                return AppendResult([], present, None)
            tree = self.root_tree(self.insert(base.tree, {r.id: blob_oids[r.id] for r in new}))
            # The commit carries the time of what it adds (for one record: its ts).
            parents = [pygit2.Oid(hex=head)] if head else []
            commit = self.write_commit(message_for(new), tree, parents, max(int(r.ts.timestamp()) for r in new))
            self.check_written(commit, [r.id for r in new])
            moved = reflog(new) if reflog else f"{self.ns.label}: append {len(new)}"
            if self._move_ref(head, commit, moved):
                self.maybe_gc()
                return AppendResult(new, present, str(commit), head)
            pause = self.retry_pause(attempt, deadline)
            if pause is None:
                raise self.cas_failure()
            time.sleep(pause)

    def check_written(self, commit: pygit2.Oid, new_ids: list[str]) -> None:
        """Read back, before the ref may name it, every object a write added: the commit,
        its trees down to each new blob, each new blob. libgit2 has been seen to return an
        object id on a full disk without the object landing in the database; a ref must
        never point at a commit that is not complete."""
        try:
            c = commit_at(self.repo, commit)
            top = tree_at(self.repo, c.tree[self.ns.tree_dir].id)
            odb = self.repo.odb
            subtrees: dict = {}  # each first-level tree read once (an import adds thousands of ids)
            for key in new_ids:
                a, b, rest = entry_path(key)
                if a not in subtrees:
                    subtrees[a] = tree_at(self.repo, top[a].id)
                leaf = tree_at(self.repo, subtrees[a][b].id)
                if not odb.exists(leaf[rest].id):
                    raise KeyError(str(leaf[rest].id))
        except KeyError as exc:
            raise RepositoryError(
                f"the object database did not keep what was just written (object {exc.args[0] if exc.args else '?'} "
                f"is missing; is the disk full?); the {self.ns.noun} was not changed"
            ) from None

    def _ref_lock(self) -> Path:
        return self.gr.common_dir / (self.ref_name + ".lock")

    def retry_pause(self, attempt: int, deadline: float) -> Optional[float]:
        """After a lost compare-and-swap (call it holding `write_lock`): seconds to wait
        before the next attempt, or None to give up.

        A moving ref is retried within the attempt and time budgets. A held
        `<ref>.lock` is waited for until it goes away or is older than
        lifeline.staleRefLockSeconds: no lifeline writer can own it (they all hold the
        log's write lock, and we do), so it was left by a process killed inside its ref
        update, and it is removed. A younger lock that cannot turn stale within the time
        budget ends the wait (the error names the file)."""
        lock = self._ref_lock()
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            if attempt < CAS_ATTEMPTS or time.monotonic() < deadline:
                return random.uniform(0.001, 0.004) * min(attempt, 10)
            return None
        stale_after = self.gr.config_int("lifeline.staleRefLockSeconds", STALE_REF_LOCK_SECONDS)
        if age >= stale_after:
            try:
                planned = lock.read_text(encoding="ascii").strip()  # the move the dead writer was making
                lock.unlink()
            except (FileNotFoundError, UnicodeDecodeError):
                planned = ""
            if HEX40.fullmatch(planned):
                drop_phantom_reflog(self.gr, self.ref_name, self.head(), planned)
            return 0.0
        if time.monotonic() + (stale_after - age) <= deadline or attempt < CAS_ATTEMPTS:
            return 0.05
        return None

    def cas_failure(self) -> LifelineError:
        lock = self._ref_lock()
        if lock.exists():
            return RepositoryError(
                f"{self.ref_name} is locked: {lock} exists. Another git process is updating it (a lock "
                "left by a crashed process is removed by the next write once it is older than "
                f"lifeline.staleRefLockSeconds, {STALE_REF_LOCK_SECONDS} s by default). Nothing was written."
            )
        return ConflictError(f"{self.ref_name} kept moving under concurrent writers; nothing was written, try again")

    def _move_ref(self, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
        """Compare-and-swap the ref from `old` (None: absent) to `new`; False when another writer won.
        Creating the ref checks its name again (another process may have created a clashing one)."""
        if old is None:
            self.refuse_clash()
        return cas_ref(self.gr, self.ref_name, old, new, message)

    def move_ref(self, old: Optional[str], new: str, message: str) -> bool:
        return self._move_ref(old, pygit2.Oid(hex=new), message)

    def maybe_gc(self) -> None:
        # libgit2 never runs git's auto-gc; loose objects would pile up (6 per append).
        # Sample one fan-out directory the way `git gc --auto` does, and only then spawn it.
        sample = self.gr.common_dir / "objects" / _LOOSE_SAMPLE_DIR
        try:
            count = len(os.listdir(sample))
        except OSError:
            return
        if count > _LOOSE_SAMPLE_LIMIT and os.environ.get("GIT_LIFELINE_NO_GC") != "1":
            self.gr.git(["gc", "--auto", "--quiet"], check=False)

    # ---- another clone's head: the union (integrate.py moves the ref) ----------------------
    def union(
        self, ours: Optional[pygit2.Tree], theirs: Optional[pygit2.Tree], progress: Optional[object] = None
    ) -> Union:
        return union_of(self.repo, self.ns, ours, theirs, progress)

    def incoming_by_diff(self, old: Optional[str], new: str) -> tuple[list[str], list[str]]:
        """(new ids, changed ids) between two heads of this log, by tree walk."""
        entries = self.gain(self.tree_id(old), self.tree_id(new)).entries
        return [g.entry_id for g in entries if not g.replaced], [g.entry_id for g in entries if g.replaced]

    def gain(self, old_tree: Optional[str], new_tree: Optional[str]) -> TreeGain:
        """What tree `new_tree` of this log gained over `old_tree` (trees.tree_gain)."""
        return tree_gain(self.repo, old_tree, new_tree)

    def blob_bytes(self, oid: str) -> bytes:
        """The bytes of blob `oid` (KeyError when missing or not a blob)."""
        return blob_data(self.repo, pygit2.Oid(hex=oid))

    def merge_message(self, source: str, theirs: str, u: Union, parsed: dict) -> str:
        """The merge commit's message (informative only: readers take records from the tree)."""
        return (
            f"{self.ns.label}: merge {source}/{self.name} into {self.name}\n\n"
            f"{self.ns.label.title()}-Merged: {theirs}\n"
        )
