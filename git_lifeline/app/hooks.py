"""Git hooks: what each one checks (installing them: hook_files.py).

The installed scripts are thin: `exec git lifeline hook <name> "$@"`, after running
any hook they replaced. Everything else lives here:

* pre-push verifies each ref of ours being pushed, lines and review trails alike
  (git/gates.py: valid records, append-only history, fast-forward of what the remote
  has, no name clashing by case with one the remote has as last fetched) and refuses
  the push when anything fails; when only code goes out while
  ledger entries wait, it says so (never blocks).
* post-commit reminds, in one line, when code commits pile up with no new entry; it
  says nothing for a commit git replays (rebase, cherry-pick, am, the end of a merge).
* commit-msg (opt-in) checks `Lifeline: <id>` trailers and writes full ids.
* pre-receive (server) refuses updates of lines and review trails that are not
  fast-forwards, that delete one, that bring a name clashing by case with one the
  server has, or that fail verification (the same gates).
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import InputError, LifelineError
from ..git.gates import RefUpdate, check_updates, hook_input, is_ours, outgoing_updates, see_quarantine
from ..git.history import replaying, unrecorded_commits
from ..git.namespaces import names_in_use, tracking_names
from ..git.repo import GitRepo, run_program
from ..git.store import last_append_time
from ..git.sync import ZERO, remotes, unpushed
from .hook_files import (
    CHAIN_SUFFIX,
    HOOKS,
    SH_SHEBANGS,
    hooks_dir,
)

# Hooks whose failure git honours; the others (post-commit) can never block.
BLOCKING = frozenset({"pre-push", "commit-msg", "pre-receive"})
REMIND_SCAN_LIMIT = 1000
# `hook post-commit --exit-code`: exit 1 when it reminds, so that a runner which shows
# a hook's output only when it fails (the pre-commit framework) shows the reminder;
# git ignores a post-commit hook's exit code.
EXIT_CODE_FLAG = "--exit-code"


# ---- running -------------------------------------------------------------------------
@dataclass
class HookOutcome:
    code: int = 0
    messages: list[str] = field(
        default_factory=list
    )  # lines for stderr, one line each (a break inside is shown escaped)


def run_chained(gr: GitRepo, name: str, args: list[str], stdin: bytes) -> int:
    """Run the user's own hook that ours replaced; 0 when there is none. A shell script
    is sourced in a subshell whose $0 is the hook's own path, as the installed script
    does: hook managers (husky) find what to run from their own name."""
    path = hooks_dir(gr) / name
    chained = path.with_name(name + CHAIN_SUFFIX)
    if not (chained.is_file() and os.access(chained, os.X_OK)):
        return 0
    try:
        with open(chained, "rb") as f:
            first = f.readline().rstrip(b"\n").decode("utf-8", "replace")
    except OSError:
        first = ""
    if first in SH_SHEBANGS:
        return run_program(["sh", "-c", f". {shlex.quote(str(chained))}", str(path), *args], stdin)
    return run_program([str(chained), *args], stdin)


def _refused(out: HookOutcome, problems: list[str]) -> None:
    out.code = 1
    out.messages += [f"  {p}" for p in problems[:30]]
    if len(problems) > 30:
        out.messages.append(f"  ... and {len(problems) - 30} more")


def pre_push(gr: GitRepo, args: list[str], stdin: bytes) -> HookOutcome:
    out = HookOutcome()
    remote = args[0] if args else ""
    updates = [RefUpdate(*parts) for parts in hook_input(stdin, 4)]
    ours = [u for u in updates if is_ours(u.remote_ref) or is_ours(u.local_ref)]
    if not updates and os.environ.get("PRE_COMMIT_REMOTE_NAME"):
        # run by the pre-commit framework, which does not pass the ref list: check what
        # each line and trail adds on top of the remote as last fetched
        remote = os.environ["PRE_COMMIT_REMOTE_NAME"]
        ours = outgoing_updates(gr, remote)
    present = tracking_names(gr, remote) if ours and remote in remotes(gr) else set()
    problems = check_updates(gr, [(u.ref, u.old, u.new) for u in ours], f"remote {remote or 'the remote'}", present)
    if problems:
        out.messages.append("git-lifeline: push refused, the ledger would not be safe on the remote:")
        _refused(out, problems)
        out.messages.append("  (inspect: git lifeline verify; push without this check: git push --no-verify)")
        return out
    code_out = any(u.remote_ref.startswith("refs/heads/") and u.new != ZERO for u in updates)
    framework_ref = os.environ.get("PRE_COMMIT_REMOTE_BRANCH", "") if not updates else ""
    if framework_ref.startswith("refs/heads/"):
        code_out, ours = True, []  # the framework pushes code; its lines were only checked
    if code_out and not ours and remote in remotes(gr):
        for line, n in unpushed(gr, remote):
            word = "entry" if n == 1 else "entries"
            out.messages.append(
                f"git-lifeline: line {line} has {n} {word} not pushed to {remote}; run: git lifeline push {remote}"
            )
    return out


def post_commit(gr: GitRepo, args: Sequence[str] = ()) -> HookOutcome:
    out = HookOutcome()
    if replaying(gr) or not gr.config_bool("lifeline.remind", True):
        return out
    threshold = gr.config_int("lifeline.remindAfter", 1)
    if threshold <= 0:
        return out
    run = unrecorded_commits(gr, last_append_time(gr, not_after=_latest_believable(gr)), REMIND_SCAN_LIMIT)
    if run is None or run.count < threshold:
        return out
    subject = run.subject or "What changed"
    more = f"{run.count}+" if run.walked > REMIND_SCAN_LIMIT else str(run.count)
    word = "commit" if run.count == 1 else "commits"
    out.messages.append(
        f"git-lifeline: {more} {word} since the last ledger entry; record why: "
        f'git lifeline log --kind decision --summary {shlex.quote(subject)} --body "..." '
        "(silence: git config lifeline.remindAfter 0)"
    )
    if EXIT_CODE_FLAG in args:
        out.code = 1
    return out


def _latest_believable(gr: GitRepo) -> int:
    """The latest time an append may carry and still count: now plus the clock skew
    tolerated (lifeline.maxClockSkew); an unreadable setting counts as the default."""
    from ..core.clock import DEFAULT_MAX_SKEW, SKEW_KEY, parse_skew

    try:
        skew = parse_skew(gr.config_get(SKEW_KEY))
    except InputError:
        skew = DEFAULT_MAX_SKEW
    return int(time.time() + skew.total_seconds())


def commit_msg(gr: GitRepo, args: list[str], prefer_line: str) -> HookOutcome:
    from ..git.links import TRAILER, resolve, trailer_values

    out = HookOutcome()
    if not args:
        out.code, out.messages = 2, ["git-lifeline: commit-msg hook called without the message file"]
        return out
    path = Path(args[0])
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.code, out.messages = 2, [f"git-lifeline: cannot read {path}: {exc.strerror}"]
        return out
    values = trailer_values(gr, data)
    if not values:
        return out
    text = data.decode("utf-8", "replace")
    problems = []
    for value in values:
        try:
            full, _line = resolve(gr, value, prefer_line)
        except InputError as exc:
            problems += exc.lines_after("git-lifeline: ")
            continue
        if full != value:
            text = _replace_trailer_value(text, value, full)
    if problems:
        out.code = 1
        out.messages = problems + [f"git-lifeline: the commit was not made; fix or remove the '{TRAILER}:' trailer"]
        return out
    if text.encode("utf-8") != data:
        path.write_bytes(text.encode("utf-8"))
    return out


def _replace_trailer_value(text: str, value: str, full: str) -> str:
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        key, sep, rest = lines[i].partition(":")
        if sep and key.strip().lower() == "lifeline" and rest.strip() == value:
            lines[i] = f"{key}: {full}"
            break
    return "\n".join(lines)


def pre_receive(gr: GitRepo, stdin: bytes) -> HookOutcome:
    out = HookOutcome()
    see_quarantine(gr)
    updates = [(ref, old, new) for old, new, ref in hook_input(stdin, 3) if is_ours(ref)]
    # the server's names are listed only when a ref of ours moves (a code push lists none)
    problems = check_updates(gr, updates, "this server", names_in_use(gr) if updates else ())
    if problems:
        out.messages.append("git-lifeline: ledger update refused:")
        _refused(out, problems)
    return out


def run(gr: GitRepo, name: str, args: list[str], stdin: bytes, prefer_line: str) -> HookOutcome:
    """Run the chained user hook, then ours. post-commit never fails."""
    if name not in HOOKS:
        raise InputError(f"unknown hook {name!r}; known: {', '.join(HOOKS)}")
    code = run_chained(gr, name, args, stdin)
    if code != 0 and name in BLOCKING:
        return HookOutcome(code, [])
    try:
        if name == "pre-push":
            return pre_push(gr, args, stdin)
        if name == "post-commit":
            return post_commit(gr, args)
        if name == "commit-msg":
            return commit_msg(gr, args, prefer_line)
        return pre_receive(gr, stdin)
    except LifelineError as exc:
        if name not in BLOCKING:
            return HookOutcome(0, exc.lines_after(f"git-lifeline: {name}: "))
        raise
