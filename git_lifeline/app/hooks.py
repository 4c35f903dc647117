"""Git hooks: installing them without harm, and what each one checks.

The installed scripts are thin: `exec git lifeline hook <name> "$@"`. Everything
else lives here, behind the service:

* install never overwrites a user's hook. An existing one is renamed to
  `<hook>.lifeline-chained` and run by ours first (with the same arguments and
  standard input); when it fails, its exit code stands. Uninstall puts it back.
* the hooks directory is where git runs hooks from: `core.hooksPath` (read through
  `git config`; relative to the top of the work tree, or the git dir when bare),
  else `hooks/` in the common git dir, which every linked worktree shares.
* pre-push verifies each ref of ours being pushed, lines and review trails alike
  (git/gates.py: valid records, append-only history, fast-forward of what the remote
  has) and refuses the push when anything fails; when only code goes out while
  ledger entries wait, it says so (never blocks).
* post-commit reminds, in one line, when code commits pile up with no new entry.
* commit-msg (opt-in) checks `Lifeline: <id>` trailers and writes full ids.
* pre-receive (server) refuses updates of lines and review trails that are not
  fast-forwards, that delete one, or that fail verification (the same gates).
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import InputError, LifelineError
from ..git.fs import read_head
from ..git.gates import RefUpdate, check_updates, is_ours, outgoing_updates, see_quarantine
from ..git.history import unrecorded_commits
from ..git.repo import GitRepo, run_program
from ..git.store import last_append_time
from ..git.sync import ZERO, remotes, unpushed

HOOKS = ("pre-push", "post-commit", "commit-msg", "pre-receive")
CLIENT_DEFAULT = ("pre-push", "post-commit")
SERVER_DEFAULT = ("pre-receive",)
CHAIN_SUFFIX = ".lifeline-chained"
MARKER = "git lifeline hook"
# Hooks whose failure git honours; the others (post-commit) can never block.
BLOCKING = frozenset({"pre-push", "commit-msg", "pre-receive"})
# Where the ledger tool is missing, a client hook lets git go on (the user may not
# have the tool on this machine); a server hook fails closed (never vouch blindly).
FAIL_CLOSED = frozenset({"pre-receive"})
REMIND_SCAN_LIMIT = 1000


def script_text(name: str) -> str:
    """The thin sh script installed as hook `name` (identical to the one in hooks/)."""
    if name not in HOOKS:
        raise InputError(f"unknown hook {name!r}; known: {', '.join(HOOKS)}")
    missing = ('echo "git-lifeline: not on PATH; refusing ledger updates until it is installed" >&2\nexit 1'
               if name in FAIL_CLOSED else
               f'echo "git-lifeline: not on PATH; its {name} check was skipped" >&2\nexit 0')
    return (
        "#!/bin/sh\n"
        f"# git-lifeline {name} hook. Installed by `git lifeline hooks install`;\n"
        "# removed (restoring any hook it chains to) by `git lifeline hooks uninstall`.\n"
        "if command -v git-lifeline >/dev/null 2>&1; then\n"
        f"\texec {MARKER} {name} \"$@\"\n"
        "fi\n"
        f"if [ -x \"$0{CHAIN_SUFFIX}\" ]; then\n"
        f"\t\"$0{CHAIN_SUFFIX}\" \"$@\" || exit $?\n"
        "fi\n"
        f"{missing}\n")


def hooks_dir(gr: GitRepo) -> Path:
    """Where git looks for hooks in this repository."""
    configured = gr.config_get("core.hooksPath")
    if configured:
        p = Path(os.path.expanduser(configured))
        if not p.is_absolute():
            p = (gr.workdir if gr.workdir is not None else gr.git_dir) / p
        return p
    return gr.common_dir / "hooks"


def _is_ours(path: Path) -> bool:
    try:
        head = read_head(path, 4096)  # a FIFO planted in a hooks path must not hang us
    except OSError:
        return False
    return MARKER.encode() in head and b"git-lifeline" in head


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@dataclass
class HookState:
    name: str
    path: Path
    state: str                      # installed | absent | foreign (a hook that is not ours)
    chained: Optional[Path] = None  # the user's hook ours runs first


@dataclass
class HookChange:
    name: str
    path: Path
    action: str                     # installed | updated | unchanged | removed | restored | left | absent
    chained: Optional[Path] = None


def status(gr: GitRepo) -> list:
    d = hooks_dir(gr)
    out = []
    for name in HOOKS:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        if not path.exists():
            state = "absent"
        elif _is_ours(path):
            state = "installed"
        else:
            state = "foreign"
        out.append(HookState(name, path, state, chained if chained.exists() else None))
    return out


def default_hooks(gr: GitRepo) -> tuple:
    return SERVER_DEFAULT if gr.is_bare else CLIENT_DEFAULT


def _check_names(names) -> list:
    bad = [n for n in names if n not in HOOKS]
    if bad:
        raise InputError(f"unknown hook(s) {', '.join(bad)}; known: {', '.join(HOOKS)}")
    return list(dict.fromkeys(names))


def install(gr: GitRepo, names: Optional[list] = None) -> list:
    """Install hooks (default: pre-push and post-commit; pre-receive in a bare repo).

    Every check runs before anything is written: either all hooks are installed or
    none is."""
    names = _check_names(names or default_hooks(gr))
    d = hooks_dir(gr)
    plan = []
    for name in names:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        text = script_text(name)
        if path.is_dir() or chained.is_dir():
            raise InputError(f"{path} is a directory; nothing was installed")
        if path.exists() and not _is_ours(path) and chained.exists():
            raise InputError(f"{path} is not ours and {chained.name} already exists; move one of them away "
                             "(nothing was installed)")
        if path.exists() and _is_ours(path):
            same = path.read_text(encoding="utf-8", errors="replace") == text and _executable(path)
            plan.append((name, path, chained, text, "unchanged" if same else "updated"))
        elif path.exists() or path.is_symlink():
            plan.append((name, path, chained, text, "chain"))
        else:
            plan.append((name, path, chained, text, "installed"))
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, path, chained, text, action in plan:
        if action == "chain":
            # a non-executable hook stays so: git would not run it, and neither do we
            os.rename(path, chained)
            action = "installed"
        if action != "unchanged":
            tmp = path.with_name(f".{name}.lifeline-tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
            os.replace(tmp, path)
        out.append(HookChange(name, path, action, chained if chained.exists() else None))
    return out


def uninstall(gr: GitRepo, names: Optional[list] = None) -> list:
    names = _check_names(names or HOOKS)
    d = hooks_dir(gr)
    out = []
    for name in names:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        if path.exists() and not _is_ours(path):
            out.append(HookChange(name, path, "left"))
            continue
        if not path.exists():
            if chained.exists():  # ours was deleted by hand: give the user's hook its name back
                os.rename(chained, path)
                out.append(HookChange(name, path, "restored", chained))
            else:
                out.append(HookChange(name, path, "absent"))
            continue
        path.unlink()
        if chained.exists() or chained.is_symlink():
            os.rename(chained, path)
            out.append(HookChange(name, path, "restored", chained))
        else:
            out.append(HookChange(name, path, "removed"))
    return out


# ---- running -------------------------------------------------------------------------
@dataclass
class HookOutcome:
    code: int = 0
    messages: list = field(default_factory=list)   # lines for stderr


def run_chained(gr: GitRepo, name: str, args: list, stdin: bytes) -> int:
    """Run the user's own hook that ours replaced; 0 when there is none."""
    chained = hooks_dir(gr) / (name + CHAIN_SUFFIX)
    if not _executable(chained):
        return 0
    return run_program([str(chained), *args], stdin)


def _refused(out: HookOutcome, problems: list) -> None:
    out.code = 1
    out.messages += [f"  {p}" for p in problems[:30]]
    if len(problems) > 30:
        out.messages.append(f"  ... and {len(problems) - 30} more")


def pre_push(gr: GitRepo, args: list, stdin: bytes) -> HookOutcome:
    out = HookOutcome()
    remote = args[0] if args else ""
    updates = []
    for raw in stdin.decode("utf-8", "replace").splitlines():
        parts = raw.split()
        if len(parts) == 4:
            updates.append(RefUpdate(*parts))
    ours = [u for u in updates if is_ours(u.remote_ref) or is_ours(u.local_ref)]
    if not updates and os.environ.get("PRE_COMMIT_REMOTE_NAME"):
        # run by the pre-commit framework, which does not pass the ref list: check what
        # each line and trail adds on top of the remote as last fetched
        remote = os.environ["PRE_COMMIT_REMOTE_NAME"]
        ours = outgoing_updates(gr, remote)
    problems = check_updates(gr, [(u.ref, u.old, u.new) for u in ours], f"remote {remote or 'the remote'}")
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
            out.messages.append(f"git-lifeline: line {line} has {n} {word} not pushed to {remote}; "
                                f"run: git lifeline push {remote}")
    return out


def post_commit(gr: GitRepo) -> HookOutcome:
    out = HookOutcome()
    if not gr.config_bool("lifeline.remind", True):
        return out
    threshold = gr.config_int("lifeline.remindAfter", 1)
    if threshold <= 0:
        return out
    run = unrecorded_commits(gr, last_append_time(gr), REMIND_SCAN_LIMIT)
    if run is None or run.count < threshold:
        return out
    subject = run.subject or "What changed"
    more = f"{run.count}+" if run.walked > REMIND_SCAN_LIMIT else str(run.count)
    word = "commit" if run.count == 1 else "commits"
    out.messages.append(
        f"git-lifeline: {more} {word} since the last ledger entry; record why: "
        f"git lifeline log --kind decision --summary {shlex.quote(subject)} --body \"...\" "
        "(silence: git config lifeline.remindAfter 0)")
    return out


def commit_msg(gr: GitRepo, args: list, prefer_line: str) -> HookOutcome:
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
            problems.append(str(exc))
            continue
        if full != value:
            text = _replace_trailer_value(text, value, full)
    if problems:
        out.code = 1
        out.messages = [f"git-lifeline: {p}" for p in problems]
        out.messages.append(f"git-lifeline: the commit was not made; fix or remove the '{TRAILER}:' trailer")
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
    updates = []
    for raw in stdin.decode("utf-8", "replace").splitlines():
        parts = raw.split()
        if len(parts) == 3 and is_ours(parts[2]):
            old, new, ref = parts
            updates.append((ref, old, new))
    problems = check_updates(gr, updates, "this server")
    if problems:
        out.messages.append("git-lifeline: ledger update refused:")
        _refused(out, problems)
    return out


def run(gr: GitRepo, name: str, args: list, stdin: bytes, prefer_line: str) -> HookOutcome:
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
            return post_commit(gr)
        if name == "commit-msg":
            return commit_msg(gr, args, prefer_line)
        return pre_receive(gr, stdin)
    except LifelineError as exc:
        if name not in BLOCKING:
            return HookOutcome(0, [f"git-lifeline: {name}: {exc}"])
        raise
