"""Sync every namespace of the ledger through the repository's normal git remotes.

Network work runs through the `git` executable, so ssh config, credential helpers,
`insteadOf` and server-side hooks behave exactly as they do for code. Every step loops
over namespaces.NAMESPACES (the ledger's lines, the review trails), so no family of
refs travels unverified or is left behind:

* fetch: `+refs/lifeline/*:refs/remotes/<remote>/lifeline/*` and the same for
  `refs/lifeline-review/*` (pruned). What arrives lands in tracking refs, never
  straight in our refs, so a fetch can never overwrite what was not pushed yet.
* integrate, per log: missing -> create; behind -> fast-forward; ahead -> nothing;
  diverged -> a merge commit (local head, remote head) whose tree is the union of both
  (integrate.integrate_head). Everything that would arrive, in every namespace,
  is verified first by the one engine (verify.verified_incoming: only the commits that
  are new, so the cost follows the change); nothing moves when anything fails.
* union: both trees are walked together and equal subtree oids are skipped. One id
  with two blobs is settled by the namespace's pick rule (the ledger's: earliest ts,
  then the smallest blob oid, the very rule verify accepts at merges), so every clone
  keeps the same blob; two blobs whose content differs are corruption, refused.
* push: one `git push <remote> <ref>:<ref>...` for every log, never forced, after
  verifying what each adds on top of the remote as last fetched. A rejection is
  returned as a value, with what happened and what to run.
"""

from __future__ import annotations

import functools
import random
import re
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..errors import InputError, LifelineError
from .command import GitCommandError, git_lines, run_git
from .fanout import (
    CorruptionError,
    FanoutLog,
    Namespace,
    Progress,
    clash_message,
    name_clashes,
    no_progress,
)
from .integrate import PullLine, integrate_head, relation
from .libgit2 import pygit2
from .names import NAME_RE
from .namespaces import LEDGER, NAMESPACES, REVIEW, names_in_use, namespace_of, tracking_names
from .repo import GitRepo
from .store import LineStore
from .trails import ReviewTrail

# The verifier (git/verify.py, git/checks.py and the content rules they load) is imported by
# integrate_all and verify_outgoing, the two steps that verify: every read catches up through
# this module (app/catch_up.py: fetched_heads, holds) and most reads find nothing fetched.

ZERO = "0" * 40
# git's words when a push lost because the remote's log moved: pull, then push again
_MOVED_UNDER_US = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
    "failed to lock",
)
_REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# the class that stores each namespace's logs (what is specific to it: merge messages...)
_LOGS: dict[str, type[FanoutLog]] = {LEDGER.name: LineStore, REVIEW.name: ReviewTrail}
if set(_LOGS) != {ns.name for ns in NAMESPACES}:  # pragma: no cover - caught by any import
    raise ImportError("a namespace has no log class in sync._LOGS")


def open_log(gr: GitRepo, ns: Namespace, name: str) -> FanoutLog:
    """The log `name` of namespace `ns`, as the class that knows what is specific to it."""
    return _LOGS[ns.name](gr, name)  # type: ignore[call-arg]


def local_heads(gr: GitRepo, only: Optional[list[str]] = None, ns: Namespace = LEDGER) -> dict[str, str]:
    heads: dict[str, str] = {}
    for name in ns.names(gr):
        if only is None or name in only:
            head = FanoutLog(gr, ns, name).head()
            if head:
                heads[name] = head
    return heads


# ---- remotes -------------------------------------------------------------------------
def remotes(gr: GitRepo) -> list[str]:
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
        if remote is None and not known:
            raise InputError(
                "this repository has no remote to exchange the ledger with; add one: git remote add origin <url>"
            )
        if remote is None:
            raise InputError(
                f"no remote given, the current branch has no upstream and there is no 'origin'; "
                f"name one of {', '.join(known)} (e.g. git lifeline push {known[0]})"
            )
        hint = (
            f" (known: {', '.join(known)})"
            if known
            else " (this repository has none; add one: git remote add origin <url>)"
        )
        raise InputError(f"{name!r} is not a configured remote{hint}; sync takes a remote's name, not a URL")
    if not _REMOTE_NAME.fullmatch(name):
        raise InputError(f"remote name {name!r} cannot be used in a tracking ref")
    return name


# ---- fetch ---------------------------------------------------------------------------
@dataclass
class FetchLine:
    line: str
    before: Optional[str]  # tracking head before the fetch
    after: Optional[str]  # tracking head after the fetch
    local: Optional[str]
    state: str  # relation(local, after)


def fetch(gr: GitRepo, remote: str, only: Optional[list[str]] = None) -> list[FetchLine]:
    """Fetch every log of every namespace into tracking refs; report how each remote line
    relates to ours."""
    before = LEDGER.tracking_heads(gr, remote)
    try:
        gr.git(
            [
                "fetch",
                "--quiet",
                "--prune",
                "--no-tags",
                "--no-write-fetch-head",
                "--",
                remote,
                *(ns.fetch_refspec(remote) for ns in NAMESPACES),
            ]
        )
    except GitCommandError as exc:
        raise LifelineError(f"fetching the ledger from {remote!r} failed:", *exc.git_said) from None
    after = LEDGER.tracking_heads(gr, remote)
    local = local_heads(gr)
    names = sorted(set(before) | set(after) | set(local))
    out = []
    for line in names:
        if only is not None and line not in only:
            continue
        out.append(
            FetchLine(
                line,
                before.get(line),
                after.get(line),
                local.get(line),
                relation(gr.repo, local.get(line), after.get(line)),
            )
        )
    return out


# ---- pull ----------------------------------------------------------------------------
@dataclass
class Refused:
    """A line of the remote left out of a pull, with its review trail: one of the two
    failed verification, or its name clashes by case with another (`clash`: that name)."""

    namespace: str  # the log that failed: namespaces.Namespace.name
    name: str  # the line
    why: tuple[str, ...]  # the verifier's words (CorruptionError), line by line
    clash: Optional[str] = None  # left out for its name alone: the name it clashes with

    @property
    def label(self) -> str:
        return f"line {self.name}" if self.namespace == LEDGER.name else f"line {self.name} (its review trail)"


class PartlyPulled(CorruptionError):
    """Some logs of the remote failed verification and were left out (nothing of them
    was written); every other log was brought in. `pulled` is what integrate_all would
    have returned for those, `refused` the logs left out."""

    report: Any = None  # set by the app layer: what the command did for the other lines

    def __init__(self, remote: str, refused: list[Refused], pulled: dict[str, list[PullLine]]):
        self.remote = remote
        self.refused = refused
        self.pulled = pulled
        names = [r.label for r in refused]
        gone = {r.name for r in refused}
        others = [p.line for p in pulled.get(LEDGER.name, []) if p.line not in gone]
        brought = f"The other lines were brought in ({', '.join(others)})" if others else "No other line was brought in"
        shown = [line for r in refused[:5] for line in r.why]
        more = [f"... and {len(refused) - 5} more"] if len(refused) > 5 else []
        it = "it" if len(names) == 1 else "them"
        broken = [r.name for r in refused if r.clash is None]
        clashing = [r.name for r in refused if r.clash is not None]
        remedies = []
        if broken:
            remedies.append(
                f"{broken[0]} fails verification: until whoever pushed it repairs it (git lifeline verify "
                f"--line {broken[0]}, on their clone), this command exits 1."
            )
        if clashing:
            # nothing is wrong with such a line but its name beside another: verify passes on
            # the clone that pushed it, so the pair is parted by renaming one (FORMAT §4)
            name = clashing[0]
            remedies.append(
                f"{name} cannot come in beside a line whose name differs only in case; until one of the "
                f"two is renamed, this command exits 1. To rename {name}: git lifeline promote --from "
                f"{name} --to <new name> --id <each id>, then delete refs/lifeline/{name} and "
                f"refs/lifeline-review/{name} (git update-ref -d) on each clone and on {remote}."
            )
        super().__init__(
            f"{' and '.join(names)} from {remote} {'was' if len(names) == 1 else 'were'} left out "
            f"(nothing of {it} was written). {brought}. Why:",
            *shown,
            *more,
            *remedies,
            f"Pull or sync the other lines alone with --line, e.g. "
            f"git lifeline sync {remote} --line {others[0] if others else 'NAME'}",
        )

    @property
    def lines(self) -> list[PullLine]:
        """The PullLine of every ledger line that was brought in (or was up to date)."""
        return list(self.pulled.get(LEDGER.name, []))

    @property
    def refused_names(self) -> set[str]:
        return {r.name for r in self.refused}


def integrate_all(
    gr: GitRepo, remote: str, only: Optional[list[str]] = None, progress: Progress = no_progress
) -> dict[str, list[PullLine]]:
    """Bring every fetched log of `remote`, in every namespace, into ours (no network):
    {namespace name: [PullLine]}. Everything that would arrive is verified before
    anything moves. A log that fails is left out whole and the others still come in
    (a hosted remote runs no hook: one bad line must not hold every line back); then
    PartlyPulled is raised, carrying what was brought in."""
    from .verify import verified_incoming

    plan = []
    for ns in NAMESPACES:
        theirs_all = ns.tracking_heads(gr, remote)
        for name in sorted(set(theirs_all) | set(local_heads(gr, None, ns))):
            if only is None or name in only:
                plan.append((open_log(gr, ns, name), theirs_all.get(name)))
    arriving = [
        (log, theirs)
        for log, theirs in plan
        if theirs is not None and relation(gr.repo, log.head(), theirs) in ("new", "behind", "diverged")
    ]
    # A line and its review trail travel together: when either fails, both are left out.
    refused: dict[str, Refused] = {}  # line -> Refused
    # A name new here that clashes by case with one in use here, or with another arriving,
    # is left out (fanout.name_clashes, the check of every gate and write).
    clashes = name_clashes(names_in_use(gr), [log.name for log, _theirs in arriving])
    for log, _theirs in arriving:
        if log.name in clashes and log.name not in refused:
            refused[log.name] = Refused(
                log.ns.name,
                log.name,
                (f"{log.ns.noun} {log.name} from {remote}: name-clash: {clash_message(log.name, clashes[log.name])}",),
                clashes[log.name],
            )

    def key(log: FanoutLog) -> str:
        return log.name

    # Lines that land together may anchor each other's parents and origins: when one is
    # left out, the others are verified again without it, until no more are left out.
    while True:
        pending = {log.name: theirs for log, theirs in arriving if log.ns is LEDGER and key(log) not in refused}
        verified: dict = {}

        def verify(
            log: FanoutLog, local: Optional[str], theirs: str, pending: dict = pending, verified: dict = verified
        ) -> dict:
            k = (log.ns.name, log.name, local, theirs)
            if k not in verified:  # re-checked only when a local append slipped in since the first check
                verified[k] = verified_incoming(log, local, theirs, remote, progress, pending)
            return verified[k]

        before = len(refused)
        for log, head in arriving:
            if key(log) not in refused:
                try:
                    verify(log, log.head(), head)
                except CorruptionError as exc:
                    refused[key(log)] = Refused(log.ns.name, log.name, exc.message_lines)
        if len(refused) == before:
            break
    out: dict[str, list[PullLine]] = {ns.name: [] for ns in NAMESPACES}
    for log, theirs in plan:
        if key(log) in refused:
            continue
        try:
            out[log.ns.name].append(integrate_head(log, theirs, functools.partial(verify, log), remote, progress))
        except CorruptionError as exc:  # e.g. one id with two contents, found by the merge
            refused[key(log)] = Refused(log.ns.name, log.name, exc.message_lines)
    if refused:
        raise PartlyPulled(remote, list(refused.values()), out)
    return out


def integrate(
    gr: GitRepo, remote: str, only: Optional[list[str]] = None, progress: Progress = no_progress
) -> list[PullLine]:
    """integrate_all, returning what happened to the ledger's lines (the review trails
    were integrated too, by the same verification)."""
    return integrate_all(gr, remote, only, progress)[LEDGER.name]


# ---- push ----------------------------------------------------------------------------
@dataclass
class PushLine:
    line: str
    flag: str  # git's porcelain flag: ' ' ff, '*' new, '=' up to date, '!' rejected
    summary: str  # git's words, e.g. "[rejected] (fetch first)"
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
    lines: list[PushLine] = field(default_factory=list)
    remote_messages: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> list[PushLine]:
        return [p for p in self.lines if not p.ok]


def verify_outgoing(
    gr: GitRepo, remote: str, outgoing: list[tuple[Namespace, str, str]], progress: Progress = no_progress
) -> None:
    """Refuse to spread a corrupt log: verify what each (namespace, name, head) adds on
    top of the remote as last fetched, and that no name new there clashes by case with one
    it has (fanout.name_clashes)."""
    from .verify import problem_lines, verify_range

    clashes = name_clashes(tracking_names(gr, remote), [name for _ns, name, _head in outgoing])
    for ns, name, _head in outgoing:
        if name in clashes:
            raise CorruptionError(
                f"{ns.noun} {name}: name-clash: {clash_message(name, clashes[name])}; nothing was pushed"
            )
    for ns, name, head in outgoing:
        known = ns.tracking_heads(gr, remote).get(name)
        hide = [known] if known and gr.repo.get(known) is not None else []
        report = verify_range(open_log(gr, ns, name), head, hide)
        if not report.ok:
            raise CorruptionError(
                f"{ns.noun} {name} fails verification; nothing was pushed:",
                *problem_lines(report.problems),
                "(run: git lifeline verify)",
            )


def push(gr: GitRepo, remote: str, only: Optional[list[str]] = None, progress: Progress = no_progress) -> PushResult:
    """Push every log of every namespace (of the `only` names, when given) in one
    `git push`, never forced; lines are named `<line>`, review trails `review:<line>`."""
    outgoing = [(ns, name, head) for ns in NAMESPACES for name, head in sorted(local_heads(gr, only, ns).items())]
    result = PushResult(remote)
    if not outgoing:
        return result
    verify_outgoing(gr, remote, outgoing, progress)
    heads = {ns.ref(name): head for ns, name, head in outgoing}
    proc = gr.git(["push", "--porcelain", "--", remote, *(f"{ref}:{ref}" for ref in heads)], check=False)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    result.remote_messages = [
        ln[len("remote: ") :].rstrip()
        for ln in err.splitlines()
        if ln.startswith("remote: ") and ln[len("remote: ") :].strip()
    ]
    order = {ref: i for i, ref in enumerate(heads)}
    pushed = []
    for raw in out.splitlines():
        parts = raw.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, refs, summary = parts[0], parts[1], parts[2]
        src = refs.split(":", 1)[0]
        found = namespace_of(src)
        name = f"{found[0].push_prefix}{found[1]}" if found else src
        pushed.append((order.get(src, len(order)), PushLine(name, flag, summary.strip(), heads.get(src)), found))
    pushed.sort(key=lambda item: item[0])
    result.lines = [p for _i, p, _found in pushed]
    if proc.returncode != 0 and not result.lines:
        # git's own lines (a remote's come prefixed "remote: "), indented under ours
        raise LifelineError(f"pushing the ledger to {remote!r} failed:", *git_lines(err, proc.returncode))
    for _i, p, found in pushed:
        if p.ok and p.sha and found and NAME_RE.fullmatch(found[1]):
            # keep the tracking ref in step, as git does for branches, so "unpushed" is known
            gr.repo.references.create(found[0].tracking_prefix(remote) + found[1], pygit2.Oid(hex=p.sha), force=True)
    return result


def retry_pause(attempt: int, rng: Optional[random.Random] = None) -> float:
    """Seconds to wait before sync's attempt `attempt` (2, 3...) after a push lost to
    another clone's: exponential from 0.25 s, capped at 4 s, each drawn at random from
    half to one and a half times that, so clones that collided do not collide again in
    step (three clones retrying at once, without a pause, lost ~1 sync in 10)."""
    base = min(0.25 * 2 ** max(0, attempt - 2), 4.0)
    return (rng or random).uniform(0.5 * base, 1.5 * base)


# ---- unpushed entries ---------------------------------------------------------------
def unpushed(gr: GitRepo, remote: str) -> list[tuple[str, int]]:
    """[(line, entries not on the remote as last seen)] for lines ahead of their tracking ref."""
    tracking = LEDGER.tracking_heads(gr, remote)
    out = []
    for line, head in sorted(local_heads(gr).items()):
        theirs = tracking.get(line)
        if theirs == head:
            continue
        if (
            theirs is not None
            and gr.repo.get(theirs) is not None
            and gr.repo.descendant_of(pygit2.Oid(hex=theirs), pygit2.Oid(hex=head))
        ):
            continue
        store = LineStore(gr, line)
        added, _ = store.incoming_by_diff(theirs if theirs and gr.repo.get(theirs) is not None else None, head)
        if added:
            out.append((line, len(added)))
    return out


# ---- remote setup and clone ---------------------------------------------------------
def remote_setup(gr: GitRepo, remote: str) -> bool:
    """Add the ledger's fetch refspec to the remote; False when it was already there. Every
    namespace's branch exclusion is added too (even when the refspec was there): without it,
    anyone who can push a branch named `lifeline/<line>` breaks every clone's plain fetch."""
    key = f"remote.{remote}.fetch"
    configured = gr.config_all(key)
    spec = LEDGER.fetch_refspec(remote)
    wanted = [s for s in (spec, *(ns.branch_exclusion() for ns in NAMESPACES)) if s not in configured]
    for value in wanted:
        gr.config_add(key, value)
    return spec in wanted


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
        raise LifelineError("git clone failed:", *exc.git_said) from None
    return dest.resolve()


# ---- what a plain `git fetch` brought (the reads catch up: app/catch_up.py) ---------------
def fetched_heads(gr: GitRepo, line: str) -> dict[str, str]:
    """{remote: commit} of `line` in each configured remote's tracking refs, as last fetched
    (by `git lifeline fetch` or by a plain `git fetch` with the refspec init sets)."""
    out = {}
    for remote in remotes(gr):
        if _REMOTE_NAME.fullmatch(remote):
            head = LEDGER.tracking_heads(gr, remote).get(line)
            if head is not None:
                out[remote] = head
    return out


def holds(gr: GitRepo, head: Optional[str], theirs: str) -> bool:
    """Whether the line at `head` already holds the remote's head `theirs` (same, or ahead)."""
    return relation(gr.repo, head, theirs) in ("same", "ahead")


def hold_writers(gr: GitRepo, line: str) -> ExitStack:
    """The writers' locks of `line` and of its review trail, taken without waiting
    (fs.LockHeld when another process holds one): a read that brings fetched entries in
    never queues behind an import. Use it as a context manager."""
    stack = ExitStack()
    try:
        for ns in NAMESPACES:
            stack.enter_context(open_log(gr, ns, line).write_lock(wait=False))
    except BaseException:
        stack.close()
        raise
    return stack


# A session's fetch must never hold an agent up: no prompt for a password or a host key,
# and killed when it outlives its time (lifeline.sessionFetchTimeout).
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}


def quiet_fetch(gr: GitRepo, remote: str, seconds: float) -> bool:
    """Fetch every namespace from `remote` into its tracking refs within `seconds`, never
    asking anything on a terminal; False (and nothing said) when that did not work."""
    import os

    env = {**os.environ, **_NO_PROMPT}
    if not env.get("GIT_SSH_COMMAND") and not env.get("GIT_SSH") and not gr.config_get("core.sshCommand"):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    args = ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", "--", remote]
    try:
        # stdin empty: an MCP server's stdin is its protocol stream, never git's to read
        proc = gr.git([*args, *(ns.fetch_refspec(remote) for ns in NAMESPACES)], False, b"", env, seconds)
    except LifelineError:
        return False
    return proc.returncode == 0


def advertises(gr: GitRepo, remote: str, line: str, seconds: float) -> Optional[bool]:
    """Whether `remote` holds refs/lifeline/<line> (one `git ls-remote`, never prompting,
    within `seconds`); None when it could not be asked."""
    import os

    env = {**os.environ, **_NO_PROMPT}
    try:
        proc = gr.git(["ls-remote", "--", remote, LEDGER.ref(line)], False, b"", env, seconds)
    except LifelineError:
        return None
    if proc.returncode != 0:
        return None
    return bool(proc.stdout.strip())
