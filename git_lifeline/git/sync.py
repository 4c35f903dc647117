"""Sync the ledger through the repository's normal git remotes.

Network work runs through the `git` executable, so ssh config, credential helpers,
`insteadOf` and server-side hooks behave exactly as they do for code.

* fetch: `+refs/lifeline/*:refs/remotes/<remote>/lifeline/*` (pruned). The remote's
  lines land in tracking refs, never straight in `refs/lifeline/*`, so a fetch can
  never overwrite an entry that was not pushed yet.
* integrate, per line: missing -> create; behind -> fast-forward; ahead -> nothing;
  diverged -> a merge commit (local head, remote head) whose tree is the union of
  both entry sets. What arrives is verified first (only the commits that are new,
  so the cost follows the change); nothing moves when any line fails.
* union: both trees are walked together and equal subtree oids are skipped. The
  same id with two blobs is resolved by `verify.pick_blob` (earliest ts, then the
  smallest blob oid), the very rule `verify` accepts at merges, so every clone keeps
  the same blob. Two blobs whose hashed content differs are corruption, refused.
* push: `git push <remote> refs/lifeline/<line>:refs/lifeline/<line>`, never forced.
  A rejection is returned as a value, with what happened and what to run.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

import pygit2

from ..core.model import Entry
from ..errors import InputError, IntegrityError, LifelineError
from .repo import GitCommandError, GitRepo, run_git
from .store import CAS_SECONDS, LINE_RE, REF_PREFIX, LineStore, diff_entry_trees, is_entry_path, list_lines
from .verify import pick_blob, verify_range

ZERO = "0" * 40
_CAS_ATTEMPTS = 16
_LISTED_IN_MESSAGE = 10
# git's words when a push lost because the remote's line moved: pull, then push again
_MOVED_UNDER_US = ("fetch first", "non-fast-forward", "stale info", "failed to update ref", "cannot lock ref",
                   "failed to lock")
_REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class CorruptionError(IntegrityError):
    """What a remote sent (or what is here) fails verification; nothing was moved."""


class _NullProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int) -> None:
        pass


# progress(label, total) -> a context manager with update(n); the faces choose the display.
Progress = Callable[[str, int], object]


def no_progress(label: str, total: int):
    return _NullProgress()


def tracking_prefix(remote: str) -> str:
    return f"refs/remotes/{remote}/lifeline/"


def fetch_refspec(remote: str) -> str:
    return f"+{REF_PREFIX}*:{tracking_prefix(remote)}*"


# The review trails (refs/lifeline-review/<line>) travel with the ledger, by the same
# rules: fetched into tracking refs, integrated (union) by the review module, never forced.
REVIEW_PREFIX = "refs/lifeline-review/"


def review_tracking_prefix(remote: str) -> str:
    return f"refs/remotes/{remote}/lifeline-review/"


def review_fetch_refspec(remote: str) -> str:
    return f"+{REVIEW_PREFIX}*:{review_tracking_prefix(remote)}*"


def review_tracking_heads(gr: GitRepo, remote: str) -> dict:
    """{line: commit} of the remote's review trails as last fetched."""
    prefix = review_tracking_prefix(remote)
    out = {}
    for ref in gr.repo.references.iterator():
        if ref.name.startswith(prefix) and LINE_RE.fullmatch(ref.name[len(prefix):]):
            out[ref.name[len(prefix):]] = str(ref.target)
    return out


def push_review(gr: GitRepo, remote: str, lines: list) -> list:
    """Push the given lines' review trails, never forced; PushLines named `review:<line>`."""
    specs = [f"{REVIEW_PREFIX}{line}:{REVIEW_PREFIX}{line}" for line in sorted(lines)]
    if not specs:
        return []
    proc = gr.git(["push", "--porcelain", remote, *specs], check=False)
    out = []
    for raw in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = raw.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        src = parts[1].split(":", 1)[0]
        line = src[len(REVIEW_PREFIX):] if src.startswith(REVIEW_PREFIX) else src
        out.append(PushLine(f"review:{line}", parts[0], parts[2].strip(), None))
        if parts[0] in (" ", "*", "=") and LINE_RE.fullmatch(line):
            target = gr.repo.lookup_reference(REVIEW_PREFIX + line).target
            gr.repo.references.create(review_tracking_prefix(remote) + line, target, force=True)
    if proc.returncode != 0 and not out:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise LifelineError(f"pushing the review trails to {remote!r} failed:\n{err}")
    return out


# ---- remotes -------------------------------------------------------------------------
def remotes(gr: GitRepo) -> list:
    proc = gr.git(["remote"], check=False)
    return [r for r in proc.stdout.decode("utf-8", "replace").split("\n") if r]


def default_remote(gr: GitRepo) -> str:
    """The current branch's upstream remote, else origin."""
    proc = gr.git(["symbolic-ref", "-q", "--short", "HEAD"], check=False)
    branch = proc.stdout.decode("utf-8", "replace").strip()
    if branch:
        upstream = gr.config_get(f"branch.{branch}.remote")
        if upstream and upstream != "." and _REMOTE_NAME.fullmatch(upstream):
            return upstream
    return "origin"


def resolve_remote(gr: GitRepo, remote: Optional[str]) -> str:
    name = remote if remote is not None else default_remote(gr)
    known = remotes(gr)
    if name not in known:
        if remote is None:
            raise InputError("no remote given, the current branch has no upstream and there is no 'origin'; "
                             "name one: git lifeline pull <remote> (see: git remote -v)")
        hint = f" (known: {', '.join(known)})" if known else " (this repository has none; add one: git remote add)"
        raise InputError(f"{name!r} is not a configured remote{hint}; sync takes a remote's name, not a URL")
    if not _REMOTE_NAME.fullmatch(name):
        raise InputError(f"remote name {name!r} cannot be used in a tracking ref")
    return name


def tracking_heads(gr: GitRepo, remote: str) -> dict:
    """{line: commit} of the remote's lines as last fetched."""
    prefix = tracking_prefix(remote)
    out = {}
    for ref in gr.repo.references.iterator():
        if ref.name.startswith(prefix):
            line = ref.name[len(prefix):]
            target = ref.target
            if LINE_RE.fullmatch(line) and isinstance(target, pygit2.Oid):
                out[line] = str(target)
    return out


def local_heads(gr: GitRepo, only: Optional[list] = None) -> dict:
    heads = {}
    for line in list_lines(gr):
        if only is None or line in only:
            head = LineStore(gr, line).head()
            if head:
                heads[line] = head
    return heads


def relation(repo: pygit2.Repository, local: Optional[str], remote: Optional[str]) -> str:
    """same | new (remote only) | local-only | behind | ahead | diverged."""
    if remote is None:
        return "local-only"
    if local is None:
        return "new"
    if local == remote:
        return "same"
    if repo.get(remote) is None:
        return "unknown"
    if repo.descendant_of(pygit2.Oid(hex=remote), pygit2.Oid(hex=local)):
        return "behind"
    if repo.descendant_of(pygit2.Oid(hex=local), pygit2.Oid(hex=remote)):
        return "ahead"
    return "diverged"


# ---- fetch ---------------------------------------------------------------------------
@dataclass
class FetchLine:
    line: str
    before: Optional[str]   # tracking head before the fetch
    after: Optional[str]    # tracking head after the fetch
    local: Optional[str]
    state: str              # relation(local, after)


def fetch(gr: GitRepo, remote: str, only: Optional[list] = None) -> list:
    """Fetch every remote line into tracking refs; report how each relates to ours."""
    before = tracking_heads(gr, remote)
    try:
        gr.git(["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote,
                fetch_refspec(remote), review_fetch_refspec(remote)])
    except GitCommandError as exc:
        raise LifelineError(f"fetching the ledger from {remote!r} failed: {_git_reason(exc)}") from None
    after = tracking_heads(gr, remote)
    local = local_heads(gr)
    names = sorted(set(before) | set(after) | set(local))
    out = []
    for line in names:
        if only is not None and line not in only:
            continue
        out.append(FetchLine(line, before.get(line), after.get(line), local.get(line),
                             relation(gr.repo, local.get(line), after.get(line))))
    return out


def _git_reason(exc: GitCommandError) -> str:
    text = str(exc)
    return text.split("failed: ", 1)[-1] if "failed: " in text else text


# ---- union of two entries trees ----------------------------------------------------
@dataclass
class Union:
    tree: Optional[pygit2.Oid]                           # merged entries tree (None: both empty)
    incoming: list = field(default_factory=list)         # ids only the remote side had
    local_only: int = 0                                  # entries only our side had
    picked: list = field(default_factory=list)           # (id, kept blob, other blob) ts tie-breaks
    corrupt: list = field(default_factory=list)          # (id or path, reason)


def _items(tree: Optional[pygit2.Tree]) -> dict:
    return {e.name: e for e in tree} if tree is not None else {}


def _leaf_ids(repo: pygit2.Repository, obj, depth: int, prefix: str) -> list:
    """Entry ids under a subtree taken whole from one side."""
    if depth == 2 or obj.type_str != "tree":
        return [prefix]
    out = []
    for e in repo[obj.id]:
        out.extend(_leaf_ids(repo, e, depth + 1, prefix + e.name))
    return out


def union_trees(repo: pygit2.Repository, ours: Optional[pygit2.Tree], theirs: Optional[pygit2.Tree],
                progress: Optional[object] = None) -> Union:
    """Union of two `entries/` trees, walking both and skipping equal subtrees."""
    result = Union(None)
    if ours is None and theirs is None:
        return result
    if theirs is None or (ours is not None and ours.id == theirs.id):
        result.tree = ours.id
        return result
    if ours is None:
        result.tree = theirs.id
        for e in theirs:
            result.incoming.extend(_leaf_ids(repo, e, 0, e.name))
        return result
    result.tree = _union(repo, ours, theirs, 0, "", result, progress)
    return result


def _union(repo, ours, theirs, depth, prefix, result: Union, progress) -> pygit2.Oid:
    mine, other = _items(ours), _items(theirs)
    tb = repo.TreeBuilder(ours)
    for name in sorted(set(mine) | set(other)):
        a, b = mine.get(name), other.get(name)
        if depth == 0 and progress is not None:
            progress.update(1)
        if b is None:
            result.local_only += len(_leaf_ids(repo, a, depth, prefix + name))
            continue
        if a is None:
            tb.insert(name, b.id, b.filemode)
            result.incoming.extend(_leaf_ids(repo, b, depth, prefix + name))
            continue
        if a.id == b.id and a.filemode == b.filemode:
            continue
        path = prefix + name
        if depth < 2:
            if a.type_str == "tree" and b.type_str == "tree":
                tb.insert(name, _union(repo, repo[a.id], repo[b.id], depth + 1, path, result, None),
                          pygit2.GIT_FILEMODE_TREE)
            else:
                result.corrupt.append((path, "a directory on one side is a file on the other"))
            continue
        kept = _pick(repo, path, a, b, result)
        if kept is not None and kept != a.id:
            tb.insert(name, kept, pygit2.GIT_FILEMODE_BLOB)
    return tb.write()


def _pick(repo, entry_id: str, a, b, result: Union) -> Optional[pygit2.Oid]:
    """Both sides hold `entry_id` with different blobs: same content -> tie-break, else corruption."""
    if a.type_str != "blob" or b.type_str != "blob" or a.filemode != b.filemode \
            or a.filemode != pygit2.GIT_FILEMODE_BLOB:
        result.corrupt.append((entry_id, "is not a plain entry blob on both sides"))
        return None
    parsed = []
    for side, leaf in (("local", a), ("remote", b)):
        try:
            e = Entry.from_json(repo[leaf.id].data)
        except LifelineError as exc:
            result.corrupt.append((entry_id, f"the {side} copy is unreadable: {exc}"))
            return None
        if e.id != entry_id or not e.verify():
            result.corrupt.append((entry_id, f"the {side} copy's content does not match its id"))
            return None
        parsed.append(e)
    # Both recompute to the same id, so every hashed field is equal: only ts or
    # dedup_key differ, and the documented rule picks one blob on every clone.
    kept = pygit2.Oid(hex=pick_blob(repo, [a.id, b.id]))
    result.picked.append((entry_id, str(kept), str(b.id if kept == a.id else a.id)))
    return kept


# ---- pull ----------------------------------------------------------------------------
@dataclass
class PullLine:
    line: str
    action: str                   # created | fast-forward | merged | up-to-date | ahead | local-only
    before: Optional[str]         # local head before
    after: Optional[str]          # local head after
    incoming: list = field(default_factory=list)   # ids that arrived
    local_only: int = 0
    rewritten: list = field(default_factory=list)  # ids whose local blob was replaced (ts tie-break)
    parsed: dict = field(default_factory=dict)     # id -> Entry for what arrived (already verified)

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _blob_at(store: LineStore, head: str, entry_id: str) -> Optional[str]:
    oid = store._lookup_blob(store.entries_tree(head), entry_id)
    return str(oid) if oid is not None else None


def _incoming_by_diff(store: LineStore, old: Optional[str], new: str) -> tuple:
    """(new ids, changed ids) between two heads of a line, by tree walk."""
    added, changed = [], []
    for path, o, n, _kind in diff_entry_trees(store.repo, store.entries_tree(old), store.entries_tree(new)):
        if n is not None and is_entry_path(path):
            (added if o is None else changed).append(path.replace("/", ""))
    return added, changed


def _check_incoming(gr: GitRepo, line: str, remote: str, local: Optional[str], theirs: str,
                    progress: Progress, verified: dict) -> dict:
    """Verify the commits `theirs` adds to `local`; CorruptionError names every problem.
    Returns the entries the range adds (id -> Entry), parsed once for every later use."""
    if (local, theirs) in verified:
        return verified[(local, theirs)]
    store = LineStore(gr, line)
    with contextlib.ExitStack() as stack:
        # the bar opens once verify_range knows how many commits it will check
        report = verify_range(store, theirs, [local] if local else [],
                              progress=lambda total: stack.enter_context(progress(f"verifying {remote}/{line}",
                                                                                  total)))
    if not report.ok:
        shown = "\n".join(f"  {p.code}: {p.message}" + (f" (commit {p.commit[:12]})" if p.commit else "")
                          for p in report.problems[:20])
        more = f"\n  ... and {len(report.problems) - 20} more" if len(report.problems) > 20 else ""
        raise CorruptionError(
            f"line {line} from {remote} failed verification; nothing was changed:\n{shown}{more}")
    verified[(local, theirs)] = report.added
    return report.added


def merge_message(line: str, remote: str, theirs: str, u: Union, summaries: list) -> str:
    def n(k, word="entry", plural="entries"):
        return f"{k} {word if k == 1 else plural}"
    lines = [f"lifeline: merge {remote}/{line} into {line}", "",
             f"{n(len(u.incoming))} from {remote} ({theirs[:12]}), {n(u.local_only)} only here."]
    if u.picked:
        lines.append(f"{n(len(u.picked))} recorded on both sides with different timestamps: "
                     "kept the earliest (verify.pick_blob).")
    if summaries:
        lines.append("")
        lines.extend(f"+ {s}" for s in summaries[:_LISTED_IN_MESSAGE])
        if len(summaries) > _LISTED_IN_MESSAGE:
            lines.append(f"+ ... and {len(summaries) - _LISTED_IN_MESSAGE} more")
    lines += ["", f"Lifeline-Merged: {theirs}", ""]
    return "\n".join(lines)


def _plan_merge(gr: GitRepo, store: LineStore, remote: str, local: str, theirs: str,
                progress: Progress, parsed: dict) -> tuple:
    repo = gr.repo
    ours_tree, theirs_tree = store.entries_tree(local), store.entries_tree(theirs)
    with progress(f"merging {remote}/{store.line}", 256) as bar:
        u = union_trees(repo, ours_tree, theirs_tree, bar)
    if u.corrupt:
        shown = "\n".join(f"  {i}: {why}" for i, why in u.corrupt[:20])
        raise CorruptionError(f"line {store.line}: {remote} and this clone hold different content under the "
                              f"same id; nothing was changed:\n{shown}")
    incoming = [parsed.get(i) or store.get(i, theirs) for i in u.incoming]
    summaries = [f"{e.short} {e.kind}: {e.summary}" for e in sorted(incoming, key=lambda e: (e.ts, e.id))]
    root = store.root_tree(u.tree) if u.tree is not None else repo.TreeBuilder().write()
    now = int(datetime.now(timezone.utc).timestamp())
    commit = store.write_commit(merge_message(store.line, remote, theirs, u, summaries), root,
                                [pygit2.Oid(hex=local), pygit2.Oid(hex=theirs)], now)
    store.check_written(commit, list(u.incoming))
    return str(commit), u


def integrate(gr: GitRepo, remote: str, only: Optional[list] = None,
              progress: Progress = no_progress) -> list:
    """Bring every fetched line of `remote` into the local lines (no network)."""
    theirs_all = tracking_heads(gr, remote)
    names = sorted(set(theirs_all) | set(local_heads(gr)))
    if only is not None:
        names = [n for n in names if n in only]
    # Verify everything that would arrive before anything moves.
    verified: dict = {}
    for line in names:
        local, theirs = LineStore(gr, line).head(), theirs_all.get(line)
        if relation(gr.repo, local, theirs) in ("new", "behind", "diverged"):
            _check_incoming(gr, line, remote, local, theirs, progress, verified)
    return [_integrate_line(gr, line, remote, theirs_all.get(line), progress, verified) for line in names]


def _integrate_line(gr: GitRepo, line: str, remote: str, theirs: Optional[str], progress: Progress,
                    verified: dict) -> PullLine:
    store = LineStore(gr, line)
    with store.write_lock():  # queue with this repository's appends and imports of the line
        return _integrate_line_locked(gr, store, remote, theirs, progress, verified)


def _integrate_line_locked(gr: GitRepo, store: LineStore, remote: str, theirs: Optional[str], progress: Progress,
                           verified: dict) -> PullLine:
    line = store.line
    deadline = time.monotonic() + CAS_SECONDS
    for attempt in range(1, _CAS_ATTEMPTS + 1):
        if attempt > 1:
            pause = store.retry_pause(attempt, deadline)
            if pause is None:
                break
            time.sleep(pause)
        local = store.head()
        state = relation(gr.repo, local, theirs)
        if state in ("same", "ahead", "local-only"):
            action = {"same": "up-to-date", "ahead": "ahead", "local-only": "local-only"}[state]
            return PullLine(line, action, local, local)
        if state == "unknown":
            raise LifelineError(f"line {line}: {remote}/{line} names a commit this repository lacks; fetch again")
        if state in ("new", "behind"):
            # (re-checked only when a local append slipped in since the first check)
            parsed = _check_incoming(gr, line, remote, local, theirs, progress, verified)
            added, changed = _incoming_by_diff(store, local, theirs)
            what = "created" if state == "new" else "fast-forward"
            if store.move_ref(local, theirs, f"lifeline: pull {remote} ({what})"):
                return PullLine(line, what, local, theirs, incoming=added, rewritten=changed, parsed=parsed)
            continue
        parsed = _check_incoming(gr, line, remote, local, theirs, progress, verified)
        commit, u = _plan_merge(gr, store, remote, local, theirs, progress, parsed)
        if store.move_ref(local, commit, f"lifeline: pull {remote} (merge)"):
            return PullLine(line, "merged", local, commit, incoming=u.incoming, local_only=u.local_only,
                            rewritten=[p[0] for p in u.picked if p[1] != _blob_at(store, local, p[0])],
                            parsed=parsed)
    raise LifelineError(f"line {line} kept moving under concurrent writers during the pull; run it again")


# ---- push ----------------------------------------------------------------------------
@dataclass
class PushLine:
    line: str
    flag: str          # git's porcelain flag: ' ' ff, '*' new, '=' up to date, '!' rejected
    summary: str       # git's words, e.g. "[rejected] (fetch first)"
    sha: Optional[str]

    @property
    def ok(self) -> bool:
        return self.flag in (" ", "*", "=")

    @property
    def needs_sync(self) -> bool:
        """Rejected because the remote moved (behind, or lost a race with another push)."""
        return self.flag == "!" and any(s in self.summary for s in _MOVED_UNDER_US)


@dataclass
class PushResult:
    remote: str
    lines: list = field(default_factory=list)
    remote_messages: list = field(default_factory=list)

    @property
    def rejected(self) -> list:
        return [p for p in self.lines if not p.ok]


def verify_outgoing(gr: GitRepo, remote: str, heads: dict, progress: Progress = no_progress) -> None:
    """Refuse to spread a corrupt line: verify what each line adds on top of the remote."""
    tracking = tracking_heads(gr, remote)
    for line, head in sorted(heads.items()):
        known = tracking.get(line)
        hide = [known] if known and gr.repo.get(known) is not None else []
        report = verify_range(LineStore(gr, line), head, hide)
        if not report.ok:
            shown = "\n".join(f"  {p.code}: {p.message}" for p in report.problems[:20])
            raise CorruptionError(f"line {line} fails verification; nothing was pushed:\n{shown}\n"
                                  "(run: git lifeline verify)")


def push(gr: GitRepo, remote: str, only: Optional[list] = None, progress: Progress = no_progress) -> PushResult:
    heads = local_heads(gr, only)
    result = PushResult(remote)
    if not heads:
        return result
    verify_outgoing(gr, remote, heads, progress)
    specs = [f"{REF_PREFIX}{line}:{REF_PREFIX}{line}" for line in sorted(heads)]
    proc = gr.git(["push", "--porcelain", remote, *specs], check=False)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    result.remote_messages = [ln[len("remote: "):].rstrip() for ln in err.splitlines()
                              if ln.startswith("remote: ") and ln[len("remote: "):].strip()]
    for raw in out.splitlines():
        parts = raw.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, refs, summary = parts[0], parts[1], parts[2]
        src = refs.split(":", 1)[0]
        line = src[len(REF_PREFIX):] if src.startswith(REF_PREFIX) else src
        result.lines.append(PushLine(line, flag, summary.strip(), heads.get(line)))
    if proc.returncode != 0 and not result.lines:
        reason = "\n".join(ln for ln in err.splitlines() if ln.strip()) or f"git push exited {proc.returncode}"
        raise LifelineError(f"pushing the ledger to {remote!r} failed:\n{reason}")
    prefix = tracking_prefix(remote)
    for p in result.lines:
        if p.ok and p.sha and LINE_RE.fullmatch(p.line):
            # keep the tracking ref in step, as git does for branches, so "unpushed" is known
            gr.repo.references.create(prefix + p.line, pygit2.Oid(hex=p.sha), force=True)
    return result


# ---- unpushed entries ---------------------------------------------------------------
def unpushed(gr: GitRepo, remote: str) -> list:
    """[(line, entries not on the remote as last seen)] for lines ahead of their tracking ref."""
    tracking = tracking_heads(gr, remote)
    out = []
    for line, head in sorted(local_heads(gr).items()):
        theirs = tracking.get(line)
        if theirs == head:
            continue
        if theirs is not None and gr.repo.get(theirs) is not None and \
                gr.repo.descendant_of(pygit2.Oid(hex=theirs), pygit2.Oid(hex=head)):
            continue
        store = LineStore(gr, line)
        added, _ = _incoming_by_diff(store, theirs if theirs and gr.repo.get(theirs) is not None else None, head)
        if added:
            out.append((line, len(added)))
    return out


# ---- remote setup and clone ---------------------------------------------------------
def remote_setup(gr: GitRepo, remote: str) -> bool:
    """Add the ledger's fetch refspec to the remote; False when it was already there."""
    spec = fetch_refspec(remote)
    if spec in gr.config_all(f"remote.{remote}.fetch"):
        return False
    gr.git(["config", "--add", f"remote.{remote}.fetch", spec])
    gr._config = None
    return True


def humanish_dir(url: str) -> str:
    """The directory `git clone URL` would create."""
    path = url.rstrip("/")
    if path.endswith("/.git"):
        path = path[: -len("/.git")]
    name = re.split(r"[/:\\]", path)[-1]
    if name.endswith(".git"):
        name = name[:-4]
    if name.endswith(".bundle"):
        name = name[:-7]
    if not name or name in (".", ".."):
        raise InputError(f"cannot tell a directory name from {url!r}; give one: git lifeline clone URL DIR")
    return name


def clone(url: str, directory: Optional[str], cwd: Optional[str] = None) -> Path:
    if not url or url.startswith("-"):
        raise InputError(f"invalid repository URL {url!r}")
    target = directory or humanish_dir(url)
    if target.startswith("-"):
        raise InputError(f"invalid directory {target!r}")
    dest = Path(cwd or ".").joinpath(target)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(f"destination {target!r} already exists and is not an empty directory")
    try:
        run_git(["clone", "--quiet", "--", url, target], cwd=cwd)
    except GitCommandError as exc:
        raise LifelineError(f"git clone failed: {_git_reason(exc)}") from None
    return dest.resolve()
