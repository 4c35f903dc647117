"""A line of the ledger as git objects: one ref, one commit per append, one blob per entry.

Layout (docs/FORMAT.md is the normative description):
    refs/lifeline/<line> -> commit -> tree { entries/<id[0:2]>/<id[2:4]>/<id[4:]> : blob }
Each blob is the entry's canonical JSON. Every commit's tree is the full snapshot of
the line, so any commit answers "what was the ledger then" and a merge is a union.
"""

from __future__ import annotations

import os
import random
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

import pygit2

from ..errors import ConflictError, InputError, LifelineError, RepositoryError
from .repo import GitRepo

if TYPE_CHECKING:  # annotations only: importing the model loads pydantic
    from ..core.model import Entry
from ..core.canonical import HEX64, MIN_PREFIX

REF_PREFIX = "refs/lifeline/"
ENTRIES_DIR = "entries"
FORMAT_VERSION = "1"
DEFAULT_LINE = "main"
LINE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
_HEX = re.compile(r"[0-9a-f]+")
HEX40 = re.compile(r"[0-9a-f]{40}")
_CAS_ATTEMPTS = 64
CAS_SECONDS = 30.0  # writers queue on the line's lock; CAS retries only race outside writers
STALE_REF_LOCK_SECONDS = 5  # a ref update holds <ref>.lock for milliseconds
_LOOSE_SAMPLE_DIR = "17"  # git gc --auto estimates loose objects from this one fan-out dir
_LOOSE_SAMPLE_LIMIT = 27  # ~ gc.auto (6700) / 256


def validate_line(name: str) -> str:
    if not isinstance(name, str) or not LINE_RE.fullmatch(name):
        raise InputError(
            f"invalid line name {name!r}: use 1-63 letters, digits, '-' or '_', "
            "starting with a letter or digit")
    return name


_HELD_LOCKS: dict = {}  # lock path -> depth, for the locks this process holds


@contextmanager
def file_lock(lock_path: Path):
    """An exclusive advisory lock (flock) on `lock_path`, released by the OS if the holder
    dies; re-entrant within a process (flock would make a nested taker wait for itself).
    A no-op where it cannot be taken (no fcntl, a read-only git dir): compare-and-swap
    on the ref stays the guarantee, the lock only spares writers lost races."""
    key = str(lock_path)
    if _HELD_LOCKS.get(key):
        _HELD_LOCKS[key] += 1
        try:
            yield
        finally:
            _HELD_LOCKS[key] -= 1
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        f = open(lock_path, "a")
    except OSError:
        yield
        return
    with f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        _HELD_LOCKS[key] = 1
        try:
            yield
        finally:
            _HELD_LOCKS.pop(key, None)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def entry_path(entry_id: str) -> tuple[str, str, str]:
    return entry_id[0:2], entry_id[2:4], entry_id[4:]


@dataclass
class LoadResult:
    """Entries read from one commit, plus whatever could not be read as an entry."""

    entries: dict = field(default_factory=dict)  # id -> Entry
    blobs: dict = field(default_factory=dict)    # id -> blob oid (hex)
    problems: list = field(default_factory=list)  # (path, message)


@dataclass
class AppendResult:
    added: list            # entries newly written
    existing: list         # entries already present (idempotent no-op)
    commit: Optional[str]  # the new head, or None when nothing was written


class LineStore:
    """Reads and appends one line (`refs/lifeline/<line>`)."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        self.gr = gr
        self.repo: pygit2.Repository = gr.repo
        self.line = validate_line(line)
        self.ref_name = REF_PREFIX + line

    # ---- refs -------------------------------------------------------------
    def head(self) -> Optional[str]:
        try:
            ref = self.repo.lookup_reference(self.ref_name)
        except (KeyError, pygit2.InvalidSpecError):
            return None
        target = ref.target
        if not isinstance(target, pygit2.Oid):
            raise LifelineError(f"{self.ref_name} is a symbolic ref; a line ref must point at a commit")
        return str(target)

    def entries_tree(self, commit_id: Optional[str]) -> Optional[pygit2.Tree]:
        """The `entries/` tree of a commit (None for an empty line)."""
        if commit_id is None:
            return None
        obj = self.repo[commit_id]
        if not isinstance(obj, pygit2.Commit):
            raise LifelineError(f"{self.ref_name} points at a {obj.type_str}, not a commit")
        tree = obj.tree
        if ENTRIES_DIR not in tree or tree[ENTRIES_DIR].type_str != "tree":
            return None
        return self.repo[tree[ENTRIES_DIR].id]

    def entries_tree_id(self, commit_id: Optional[str]) -> Optional[str]:
        tree = self.entries_tree(commit_id)
        return str(tree.id) if tree is not None else None

    # ---- lookups ----------------------------------------------------------
    def _lookup_blob(self, tree: Optional[pygit2.Tree], entry_id: str) -> Optional[pygit2.Oid]:
        if tree is None:
            return None
        a, b, rest = entry_path(entry_id)
        try:
            item = tree[f"{a}/{b}/{rest}"]
        except KeyError:
            return None
        return item.id if item.type_str == "blob" else None

    def has(self, entry_id: str, commit_id: Optional[str] = None) -> bool:
        tree = self.entries_tree(commit_id if commit_id else self.head())
        return self._lookup_blob(tree, entry_id) is not None

    def get(self, entry_id: str, commit_id: Optional[str] = None) -> Optional[Entry]:
        tree = self.entries_tree(commit_id if commit_id else self.head())
        oid = self._lookup_blob(tree, entry_id)
        from ..core.model import Entry  # pydantic only where a blob is validated
        return Entry.from_json(self.repo[oid].data) if oid is not None else None

    def resolve(self, prefix: str, commit_id: Optional[str] = None) -> str:
        """Full id for a full id or a unique prefix of at least MIN_PREFIX hex chars.

        Costs a couple of tree reads whatever the ledger size, thanks to the fan-out.
        """
        p = prefix.strip().lower()
        if len(p) < MIN_PREFIX or not _HEX.fullmatch(p):
            raise InputError(
                f"invalid id {prefix!r}: give a full id or a prefix of at least {MIN_PREFIX} hex characters")
        tree = self.entries_tree(commit_id if commit_id else self.head())
        matches = []
        if tree is not None:
            a, b, rest = entry_path(p)
            try:
                leaf = self.repo[tree[f"{a}/{b}"].id]
            except KeyError:
                leaf = None
            if isinstance(leaf, pygit2.Tree):
                matches = [a + b + item.name for item in leaf if item.name.startswith(rest)]
        if not matches:
            raise InputError(f"no entry {prefix!r} in line {self.line!r}")
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in sorted(matches)[:5])
            raise InputError(f"ambiguous id prefix {prefix!r} in line {self.line!r}: matches {shown}")
        return matches[0]

    # ---- reading everything ----------------------------------------------
    def iter_blobs(self, commit_id: Optional[str] = None) -> Iterator[tuple[str, str, pygit2.Object]]:
        """(path, id-from-path, object) for every object under entries/."""
        tree = self.entries_tree(commit_id if commit_id is not None else self.head())
        if tree is None:
            return
        for a in tree:
            sub_a = self._object(a)
            if not isinstance(sub_a, pygit2.Tree):
                yield a.name, a.name, sub_a
                continue
            for b in sub_a:
                sub_b = self._object(b)
                if not isinstance(sub_b, pygit2.Tree):
                    yield f"{a.name}/{b.name}", a.name + b.name, sub_b
                    continue
                for c in sub_b:
                    yield f"{a.name}/{b.name}/{c.name}", a.name + b.name + c.name, self._object(c)

    def iter_entry_oids(self, commit_id: Optional[str] = None) -> Iterator[tuple[str, str]]:
        """(id from path, blob oid) of every blob at an entry's place, without reading blobs."""
        tree = self.entries_tree(commit_id if commit_id is not None else self.head())
        if tree is None:
            return
        for a in tree:
            if a.type_str != "tree":
                continue
            for b in self.repo[a.id]:
                if b.type_str != "tree":
                    continue
                for c in self.repo[b.id]:
                    if c.type_str == "blob":
                        yield a.name + b.name + c.name, str(c.id)

    def _object(self, item) -> Optional[pygit2.Object]:
        """The object a tree entry names; None for a gitlink (its commit lives in another repo)."""
        return self.repo[item.id] if item.type_str in ("tree", "blob") else None

    def load(self, commit_id: Optional[str] = None) -> LoadResult:
        """Every readable entry of a commit; unreadable ones become problems, never crashes."""
        from ..core.model import Entry  # pydantic only where blobs are validated
        result = LoadResult()
        for path, pid, obj in self.iter_blobs(commit_id):
            problem = None
            if not isinstance(obj, pygit2.Blob):
                problem = "not a blob"
            elif not HEX64.fullmatch(pid) or len(path) != 66:
                problem = "path is not an entry id"
            if problem is None:
                try:
                    entry = Entry.from_json(obj.data)
                except LifelineError as exc:
                    problem = f"unreadable entry: {exc}"
                else:
                    if entry.id != pid:
                        problem = f"stored id {entry.id[:12]} differs from its path"
            if problem is not None:
                result.problems.append((f"{ENTRIES_DIR}/{path}", problem))
                continue
            result.entries[pid] = entry
            result.blobs[pid] = str(obj.id)
        return result

    # ---- writing ----------------------------------------------------------
    def _insert(self, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
        """New entries tree = base + blobs {id: blob oid}; rewrites only touched subtrees."""
        return insert_fanout(self.repo, base, blobs)

    def root_tree(self, entries_tree_oid: pygit2.Oid) -> pygit2.Oid:
        tb = self.repo.TreeBuilder()
        tb.insert(ENTRIES_DIR, entries_tree_oid, pygit2.GIT_FILEMODE_TREE)
        return tb.write()

    def _ensure_reflog(self) -> None:
        ensure_reflog(self.gr, self.ref_name)

    def write_lock(self):
        """Serialises this repository's writers of the line (append, import, pull merge)."""
        return file_lock(self.gr.lifeline_dir() / f"{self.line}.lock")

    def signature(self, when: int) -> pygit2.Signature:
        name, email = self.gr.identity()
        return pygit2.Signature(name, email, when, 0)

    def write_commit(self, message: str, tree: pygit2.Oid, parents: list, when: int) -> pygit2.Oid:
        """A commit of this line at `when` (UTC), signed when git's config asks (make_commit)."""
        return make_commit(self.gr, message, tree, parents, self.signature(when))

    def resign(self, commit_id: str) -> str:
        """A commit made elsewhere (fast-import) re-made by `write_commit`: the same tree,
        parents, message and time, signed when git's config asks for it."""
        if not self.gr.config_bool("commit.gpgsign", False):
            return commit_id
        c = self.repo[commit_id]
        return str(self.write_commit(c.message, c.tree_id, list(c.parent_ids), c.committer.time))

    def append(self, entries: list, message_for, existing_check=None) -> AppendResult:
        """Append entries in one commit; compare-and-swap on the ref, retried.

        `message_for(new_entries)` builds the commit message from what is really new.
        `existing_check(entry, head)` may report an entry as already present (dedup_key).
        Entries already in the line are skipped, so appending twice is a no-op.
        """
        if not entries:
            return AppendResult([], [], None)
        self.gr.identity()  # fail before writing anything when git has no identity
        with self.write_lock():
            return self._append_locked(entries, message_for, existing_check)

    def _append_locked(self, entries: list, message_for, existing_check) -> AppendResult:
        blob_oids = {e.id: self.repo.create_blob(e.to_json()) for e in entries}
        self._ensure_reflog()
        deadline = time.monotonic() + CAS_SECONDS
        attempt = 0
        while True:
            attempt += 1
            head = self.head()
            base = self.entries_tree(head)
            new, existing = [], []
            seen = set()
            for e in entries:
                if e.id in seen:
                    continue
                seen.add(e.id)
                if self._lookup_blob(base, e.id) is not None or (existing_check and existing_check(e, head)):
                    existing.append(e)
                else:
                    new.append(e)
            if not new:
                return AppendResult([], existing, None)
            tree = self.root_tree(self._insert(base, {e.id: blob_oids[e.id] for e in new}))
            # The commit carries the time of what it adds (for one entry: that entry's ts).
            parents = [pygit2.Oid(hex=head)] if head else []
            commit = self.write_commit(message_for(new), tree, parents, max(int(e.ts.timestamp()) for e in new))
            self.check_written(commit, [e.id for e in new])
            if self._move_ref(head, commit, f"lifeline: append {len(new)}"):
                self._maybe_gc()
                return AppendResult(new, existing, str(commit))
            pause = self.retry_pause(attempt, deadline)
            if pause is None:
                raise self._cas_failure()
            time.sleep(pause)

    def check_written(self, commit: pygit2.Oid, new_ids: list) -> None:
        """Read back, before the ref may name it, every object a write added: the commit,
        its trees down to each new entry, each new blob. libgit2 has been seen to return an
        object id on a full disk without the object landing in the database; a ref must
        never point at a commit that is not complete."""
        try:
            c = self.repo[commit]
            entries = self.repo[c.tree[ENTRIES_DIR].id]
            for entry_id in new_ids:
                a, b, rest = entry_path(entry_id)
                leaf = self.repo[self.repo[entries[a].id][b].id]
                if leaf[rest].id not in self.repo:
                    raise KeyError(str(leaf[rest].id))
        except KeyError as exc:
            raise RepositoryError(
                f"the object database did not keep what was just written (object {exc.args[0] if exc.args else '?'} "
                "is missing; is the disk full?); the line was not changed") from None

    def _ref_lock(self) -> Path:
        return self.gr.common_dir / (self.ref_name + ".lock")

    def retry_pause(self, attempt: int, deadline: float) -> Optional[float]:
        """After a lost compare-and-swap (call it holding `write_lock`): seconds to wait
        before the next attempt, or None to give up.

        A moving ref is retried within the attempt and time budgets. A held
        `<ref>.lock` is waited for until it goes away or is older than
        lifeline.staleRefLockSeconds: no lifeline writer can own it (they all hold the
        line's write lock, and we do), so it was left by a process killed inside its ref
        update, and it is removed. A younger lock that cannot turn stale within the time
        budget ends the wait (the error names the file)."""
        lock = self._ref_lock()
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            if attempt < _CAS_ATTEMPTS or time.monotonic() < deadline:
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
        if time.monotonic() + (stale_after - age) <= deadline or attempt < _CAS_ATTEMPTS:
            return 0.05
        return None

    def _cas_failure(self) -> LifelineError:
        lock = self._ref_lock()
        if lock.exists():
            return RepositoryError(
                f"{self.ref_name} is locked: {lock} exists. Another git process is updating it (a lock "
                "left by a crashed process is removed by the next write once it is older than "
                f"lifeline.staleRefLockSeconds, {STALE_REF_LOCK_SECONDS} s by default). Nothing was written.")
        return ConflictError(f"{self.ref_name} kept moving under concurrent writers; nothing was written, try again")

    def _move_ref(self, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
        return cas_ref(self.gr, self.ref_name, old, new, message)

    def move_ref(self, old: Optional[str], new: str, message: str) -> bool:
        return self._move_ref(old, pygit2.Oid(hex=new), message)

    def _maybe_gc(self) -> None:
        # libgit2 never runs git's auto-gc; loose objects would pile up (6 per append).
        # Sample one fan-out directory the way `git gc --auto` does, and only then spawn it.
        sample = self.gr.common_dir / "objects" / _LOOSE_SAMPLE_DIR
        try:
            count = len(os.listdir(sample))
        except OSError:
            return
        if count > _LOOSE_SAMPLE_LIMIT and os.environ.get("GIT_LIFELINE_NO_GC") != "1":
            self.gr.git(["gc", "--auto", "--quiet"], check=False)


def subtree(repo: pygit2.Repository, tree: Optional[pygit2.Tree], name: str) -> Optional[pygit2.Tree]:
    if tree is None or name not in tree:
        return None
    obj = repo[tree[name].id]
    return obj if isinstance(obj, pygit2.Tree) else None


def insert_fanout(repo: pygit2.Repository, base: Optional[pygit2.Tree], blobs: dict) -> pygit2.Oid:
    """A two-level fan-out tree = base + blobs {64-hex id: blob oid} (ab/cd/<rest>);
    only the touched subtrees are rewritten, so the cost follows the change."""
    groups: dict = {}
    for key, oid in blobs.items():
        a, b, rest = entry_path(key)
        groups.setdefault(a, {}).setdefault(b, {})[rest] = oid
    top = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for a, by_b in groups.items():
        sub_a = subtree(repo, base, a)
        tb_a = repo.TreeBuilder(sub_a) if sub_a is not None else repo.TreeBuilder()
        for b, leaves in by_b.items():
            sub_b = subtree(repo, sub_a, b)
            tb_b = repo.TreeBuilder(sub_b) if sub_b is not None else repo.TreeBuilder()
            for rest, oid in leaves.items():
                tb_b.insert(rest, oid, pygit2.GIT_FILEMODE_BLOB)
            tb_a.insert(b, tb_b.write(), pygit2.GIT_FILEMODE_TREE)
        top.insert(a, tb_a.write(), pygit2.GIT_FILEMODE_TREE)
    return top.write()


def make_commit(gr: GitRepo, message: str, tree: pygit2.Oid, parents: list, sig: pygit2.Signature) -> pygit2.Oid:
    """The one way a commit of ours (a line, a review trail) is made: author and committer
    are `sig`, and the commit is signed when git's config asks for it (commit.gpgSign).
    Signing goes through `git commit-tree -S`, so every signing setup git supports (gpg,
    ssh with a key file or an agent, x509, gpg.program, gpg.ssh.defaultKeyCommand) works
    exactly as for the user's own commits; the message is passed verbatim, so a signed
    commit differs from an unsigned one only by its signature. The ref is not touched:
    callers move it by compare-and-swap."""
    if not gr.config_bool("commit.gpgsign", False):
        return gr.repo.create_commit(None, sig, sig, message, tree, parents)
    offset = sig.offset
    date = f"@{sig.time} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    env = dict(os.environ, GIT_AUTHOR_NAME=sig.name, GIT_AUTHOR_EMAIL=sig.email, GIT_AUTHOR_DATE=date,
               GIT_COMMITTER_NAME=sig.name, GIT_COMMITTER_EMAIL=sig.email, GIT_COMMITTER_DATE=date)
    args = ["commit-tree", "-S", str(tree)]
    for p in parents:
        args += ["-p", str(p)]
    proc = gr.git(args, input=message.encode("utf-8"), env=env, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise LifelineError(f"cannot sign the commit (commit.gpgSign is set): {err}; nothing was written")
    return pygit2.Oid(hex=proc.stdout.decode("ascii").strip())


def ensure_reflog(gr: GitRepo, ref_name: str) -> None:
    """git and libgit2 write a reflog for refs outside heads/remotes/notes only when the
    log file already exists; create it so every move of our refs is recorded."""
    log = gr.common_dir / "logs" / ref_name
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()


def cas_ref(gr: GitRepo, ref_name: str, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
    """Compare-and-swap `ref_name` from `old` (None: must not exist) to `new`.
    False when another writer won; the caller re-reads and retries. A failure of the
    disk is a RepositoryError, and leaves no reflog entry for the move that failed."""
    ensure_reflog(gr, ref_name)
    repo = gr.repo
    try:
        if old is None:
            repo.create_reference_direct(ref_name, new, False, message=message)
            return True
        ref = repo.lookup_reference(ref_name)
        if str(ref.target) != old:
            return False
        ref.set_target(new, message)
        return True
    except (pygit2.AlreadyExistsError, KeyError):
        return False
    except (pygit2.GitError, OSError) as exc:
        # libgit2 reports a concurrent writer either as a value mismatch (GitError)
        # or as a held `<ref>.lock` (OSError, with no OS reason): both mean "someone
        # else won". Anything else (no space, read-only, permissions) is the disk.
        text = str(exc)
        held = "lock" in text.lower() and (text.rstrip().endswith(":") or "exist" in text.lower())
        if "does not match" in text or held or "already exists" in text:
            return False
        drop_phantom_reflog(gr, ref_name, old, str(new))
        raise RepositoryError(f"cannot update {ref_name}: {text}; the ref was not changed") from None


def ref_value(repo: pygit2.Repository, ref_name: str) -> Optional[str]:
    try:
        return str(repo.lookup_reference(ref_name).target)
    except (KeyError, pygit2.InvalidSpecError):
        return None


def drop_phantom_reflog(gr: GitRepo, ref_name: str, old: Optional[str], new: str) -> None:
    """libgit2 appends the reflog entry before it renames `<ref>.lock` into place; when
    that last step fails (a full disk) or the writer is killed between the two, the
    reflog records a move that never happened, which verify would then report as a
    rewound line. Drop that last entry, but only when it is exactly that move and the
    ref is still at `old` (call it holding the ref's writers' lock)."""
    if ref_value(gr.repo, ref_name) != old:
        return
    try:
        with open(gr.common_dir / "logs" / ref_name, "rb+") as f:
            data = f.read()
            body = data[:-1] if data.endswith(b"\n") else data
            start = body.rfind(b"\n") + 1
            if body[start:].startswith(f"{old or '0' * 40} {new} ".encode("ascii")):
                f.truncate(start)
    except OSError:
        pass


def rewound_value(repo: pygit2.Repository, ref_name: str, head: pygit2.Oid) -> Optional[pygit2.Oid]:
    """A value the ref really held, per its reflog, that `head` does not contain (a
    rewind or a rewrite), or None when history only grew.

    A reflog line whose new value the ref never took — the writer was killed between
    logging and moving the ref, so the next line (or the ref itself) still starts from
    the old value — is not a value the ref held, and is skipped."""
    try:
        lines = list(reversed(list(repo.lookup_reference(ref_name).log())))  # oldest first
    except (KeyError, pygit2.GitError):
        return None
    for i, item in enumerate(lines):
        value = item.oid_new
        if value == head or int(str(value), 16) == 0:
            continue
        following = lines[i + 1].oid_old if i + 1 < len(lines) else head
        if following != value and following == item.oid_old:
            continue  # an update that never took effect
        try:
            if not repo.descendant_of(head, value):
                return value
        except pygit2.GitError:
            return value
    return None


def list_lines(gr: GitRepo) -> list:
    """Names of the repository's lines (refs/lifeline/<name>), sorted."""
    names = []
    for ref in gr.repo.references.iterator():
        name = ref.name
        if name.startswith(REF_PREFIX):
            line = name[len(REF_PREFIX):]
            if LINE_RE.fullmatch(line):
                names.append(line)
    return sorted(names)


_ENTRY_PATH = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}")


def is_entry_path(path: str) -> bool:
    return bool(_ENTRY_PATH.fullmatch(path))


def diff_entry_trees(repo: pygit2.Repository, old: Optional[pygit2.Tree], new: Optional[pygit2.Tree],
                     _depth: int = 0, _prefix: str = "") -> Iterator[tuple]:
    """Leaves that differ between two entries trees: (path, old_oid, new_oid, new_kind).

    Subtrees with equal oids are skipped, so the cost follows the size of the change,
    not of the ledger. Anything that is not where an entry blob belongs is yielded
    too, with its path, so callers can report it.
    """
    old_items = {e.name: e for e in old} if old is not None else {}
    new_items = {e.name: e for e in new} if new is not None else {}
    for name in sorted(old_items.keys() | new_items.keys()):
        o, n = old_items.get(name), new_items.get(name)
        # equal oids: skip. A tree's mode is fixed by its type, so only non-trees need the
        # mode compared (reading `filemode` builds an enum: it dominated range verification)
        if o is not None and n is not None and o.id == n.id and (o.type_str == "tree" or o.filemode == n.filemode):
            continue
        path = _prefix + name
        o_tree = o is not None and o.type_str == "tree"
        n_tree = n is not None and n.type_str == "tree"
        if _depth < 2 and (o is None or o_tree) and (n is None or n_tree):
            yield from diff_entry_trees(repo, repo[o.id] if o is not None else None,
                                        repo[n.id] if n is not None else None, _depth + 1, path + "/")
            continue
        if _depth < 2 and (o_tree or n_tree):
            # a tree replaced by a file or the reverse: report both sides as leaves
            if o_tree:
                yield from diff_entry_trees(repo, repo[o.id], None, _depth + 1, path + "/")
            if n_tree:
                yield from diff_entry_trees(repo, None, repo[n.id], _depth + 1, path + "/")
            if o is not None and not o_tree:
                yield path, o.id, None, o.type_str
            if n is not None and not n_tree:
                yield path, None, n.id, n.type_str
            continue
        kind = None
        if n is not None:
            kind = "blob" if n.type_str == "blob" and n.filemode in (pygit2.GIT_FILEMODE_BLOB,) else (
                n.type_str if n.type_str != "blob" else "blob-with-mode")
        yield path, o.id if o is not None else None, n.id if n is not None else None, kind


# ---- bulk writes (import) ------------------------------------------------------------
class BulkWriter:
    """Writes many entries of one line as a pack, then one commit, then moves the ref by CAS.

    Blobs are streamed to `git fast-import` while the caller is still reading and
    validating, so git compresses on one core while Python validates on the other.
    fast-import runs against a private git dir under the cache directory whose
    object store borrows the repository's as an alternate: until `publish` moves
    the finished pack into the repository and swaps the ref, nothing is visible,
    and `abort` (or any failure) removes every byte it wrote.
    """

    def __init__(self, store: LineStore):
        import hashlib
        import subprocess
        import tempfile

        self._sha1 = hashlib.sha1
        self.store = store
        self.blobs: dict = {}   # entry id -> blob oid (hex), as git will name it
        self._buf: list = []
        self._buffered = 0
        base = store.gr.lifeline_dir()
        base.mkdir(parents=True, exist_ok=True)
        _remove_stale_imports(base)
        self.tmp = Path(tempfile.mkdtemp(prefix="import-", dir=str(base)))
        self._layout()
        # A dead fast-import must surface as an error, not kill us silently: the CLI
        # restores SIGPIPE's default (for `| head`), so ignore it while we write the pipe.
        self._sigpipe = None
        try:
            import signal
            self._sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        except (ValueError, AttributeError, OSError):
            pass
        self._proc = self._start(subprocess)

    def _layout(self) -> None:
        """A minimal private git dir whose object store borrows the repository's."""
        objects = self.tmp / "objects"
        (objects / "pack").mkdir(parents=True, exist_ok=True)
        (objects / "info").mkdir(exist_ok=True)
        (self.tmp / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (self.tmp / "HEAD").write_text("ref: refs/heads/import\n")
        real_objects = (self.store.gr.common_dir / "objects").resolve()
        (objects / "info" / "alternates").write_text(f"{real_objects}\n")

    def _env(self) -> dict:
        env = dict(os.environ)
        for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                    "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE"):
            env.pop(key, None)
        # zlib's per-object state (~270 KB) is above glibc's mmap threshold, so every
        # object costs an mmap/munmap and its page faults: measured at 100k entries,
        # 4.2 s of 10 s CPU in the kernel. Keeping such blocks on the heap removes it.
        # (Other C libraries ignore the variable.)
        tunables = "glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=134217728"
        env["GLIBC_TUNABLES"] = f"{env['GLIBC_TUNABLES']}:{tunables}" if env.get("GLIBC_TUNABLES") else tunables
        return env

    def _start(self, subprocess):
        try:
            return subprocess.Popen(
                ["git", "--git-dir", str(self.tmp), "fast-import", "--quiet", "--done", "--date-format=raw"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self._env(),
                bufsize=0)
        except FileNotFoundError:
            self._cleanup()
            raise LifelineError("the git executable was not found on PATH") from None

    def _write(self, data: bytes) -> None:
        self._buf.append(data)
        self._buffered += len(data)
        if self._buffered >= 1 << 20:
            self._flush()

    def _flush(self) -> None:
        data = b"".join(self._buf)
        self._buf, self._buffered = [], 0
        try:
            self._proc.stdin.write(data)
        except OSError:
            err = self._finish_process()
            self.abort()
            raise LifelineError(f"git fast-import stopped: {err or 'broken pipe'}") from None

    def add(self, entry: Entry) -> None:
        """Stream one entry's blob (idempotent per id)."""
        if entry.id in self.blobs:
            return
        data = entry.to_json()
        self.blobs[entry.id] = self._sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self._write(b"blob\ndata %d\n%s\n" % (len(data), data))

    def _finish_process(self) -> str:
        try:
            if self._buf and self._proc.poll() is None:
                data = b"".join(self._buf)
                self._buf, self._buffered = [], 0
                self._proc.stdin.write(data)
        except OSError:
            pass
        try:
            if self._proc.stdin and not self._proc.stdin.closed:
                self._proc.stdin.close()
        except OSError:
            pass
        err = self._proc.stderr.read().decode("utf-8", "replace").strip() if self._proc.stderr else ""
        self._proc.wait()
        return err

    def abort(self) -> None:
        """Stop fast-import and delete everything it wrote; the repository is untouched."""
        self._buf, self._buffered = [], 0
        if self._sigpipe is not None:
            import signal
            try:
                signal.signal(signal.SIGPIPE, self._sigpipe)
            except (ValueError, OSError):
                pass
            self._sigpipe = None
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self._cleanup()

    def _cleanup(self) -> None:
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def publish(self, entries: list, message_for, progress=None) -> AppendResult:
        """One commit on the line's head holding `entries` (those not yet in the line),
        made by fast-import; its pack is moved into the repository, then the ref is
        swapped (CAS). On a lost swap the commit is rebuilt on the new head (the blobs
        are in the repository by then) and the swap retried.
        """
        try:
            for e in entries:
                self.add(e)
            with self.store.write_lock():
                return self._publish_locked(entries, message_for, progress)
        finally:
            self.abort()

    def _publish_locked(self, entries: list, message_for, progress) -> AppendResult:
        deadline = time.monotonic() + CAS_SECONDS
        pause = 0.0
        for attempt in range(_CAS_ATTEMPTS):
            if attempt:
                time.sleep(pause)
                self._restart()
            head = self.store.head()
            base = self.store.entries_tree(head)
            new, existing, seen = [], [], set()
            for e in entries:
                if e.id not in seen:
                    seen.add(e.id)
                    (existing if self.store._lookup_blob(base, e.id) is not None else new).append(e)
            if not new:
                return AppendResult([], existing, None)
            commit = self._commit(head, new, message_for, progress)
            self._move_pack()
            commit = self.store.resign(commit)  # fast-import cannot sign
            self.store.check_written(pygit2.Oid(hex=commit), [e.id for e in new])
            if self.store._move_ref(head, pygit2.Oid(hex=commit), f"lifeline: import {len(new)}"):
                self.store._maybe_gc()
                return AppendResult(new, existing, commit)
            pause = self.store.retry_pause(attempt + 1, deadline)
            if pause is None:
                break
        raise self.store._cas_failure()

    def _restart(self) -> None:
        import signal
        import subprocess
        self.abort()
        self._layout()
        try:
            self._sigpipe = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        except (ValueError, AttributeError, OSError):
            pass
        self._proc = self._start(subprocess)

    def _commit(self, head: Optional[str], new: list, message_for, progress) -> str:
        name, email = self.store.gr.identity()
        when = max(int(e.ts.timestamp()) for e in new)
        msg = message_for(new).encode("utf-8")
        ident = f"{name} <{email}> {when} +0000".encode("utf-8")
        parts = [b"commit refs/heads/import\n", b"author " + ident + b"\n", b"committer " + ident + b"\n",
                 b"data %d\n" % len(msg), msg, b"\n"]
        if head:
            parts.append(f"from {head}\n".encode())
        self._write(b"".join(parts))
        total = len(new)
        for i, e in enumerate(new, 1):
            a, b, rest = entry_path(e.id)
            self._write(f"M 100644 {self.blobs[e.id]} {ENTRIES_DIR}/{a}/{b}/{rest}\n".encode())
            if progress is not None and (i % 2000 == 0 or i == total):
                progress(i, total)
        self._write(b"\ndone\n")
        err = self._finish_process()
        if self._proc.returncode != 0:
            raise LifelineError(f"git fast-import failed: {err or 'exit code ' + str(self._proc.returncode)}")
        ref = self.tmp / "refs" / "heads" / "import"
        if ref.exists():
            return ref.read_text().strip()
        for line in (self.tmp / "packed-refs").read_text().splitlines():
            if line.endswith(" refs/heads/import"):
                return line.split()[0]
        raise LifelineError("git fast-import wrote no commit")

    def _move_pack(self) -> None:
        """Move the finished pack(s) into the repository: the pack first, its index last,
        so no reader ever sees an index without its pack."""
        dest = self.store.gr.common_dir / "objects" / "pack"
        dest.mkdir(parents=True, exist_ok=True)
        for pack in sorted((self.tmp / "objects" / "pack").glob("pack-*.pack")):
            stem = pack.with_suffix("")
            for suffix in (".pack", ".rev", ".idx"):
                src = stem.with_suffix(suffix)
                if src.exists():
                    os.replace(src, dest / src.name)
        # fast-import may also have left loose objects (it does not for blobs/trees/commits
        # it packs, but be safe): copy them across.
        loose = self.tmp / "objects"
        for sub in loose.iterdir():
            if len(sub.name) == 2 and sub.is_dir():
                for obj in sub.iterdir():
                    target = self.store.gr.common_dir / "objects" / sub.name / obj.name
                    if not target.exists():
                        target.parent.mkdir(exist_ok=True)
                        os.replace(obj, target)


def _remove_stale_imports(base: Path, max_age: float = 24 * 3600) -> None:
    """Private import dirs left by a process that was killed mid-import (never in use:
    an import lasts seconds, not a day)."""
    import shutil
    now = time.time()
    for d in base.glob("import-*"):
        try:
            if now - d.stat().st_mtime > max_age:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass
