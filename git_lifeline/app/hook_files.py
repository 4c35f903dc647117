"""The hook files: the scripts git-lifeline installs, and installing them without harm.

* A hook is ours only when its bytes are a script we wrote (this version's or an
  earlier one's). Anything else, even a team's hook that calls `git lifeline hook`,
  is someone else's: never overwritten, never deleted.
* Someone else's hook is kept, byte for byte, as `<hook>.lifeline-chained`; ours runs
  it first (with the same arguments and standard input) and its failure stands.
  Uninstall gives it its name back. When a hook manager rewrote the hook meanwhile
  (husky's `npm install` rewrites `.husky/_/*`), installing again keeps the new one
  the same way; an older, different backup is kept as `<hook>.lifeline-chained.<n>`.
* A hook tracked by the repository (a `core.hooksPath` inside the work tree) is the
  team's file: never renamed, replaced or removed. Install leaves it and says which
  line to add to it.
* The hooks directory is where git runs hooks from: `core.hooksPath` (read through
  `git config`; relative to the top of the work tree, or the git dir when bare), else
  `hooks/` in the common git dir, which every linked worktree shares.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from ..errors import InputError
from ..git.history import REPLAY_ACTIONS, REPLAY_STATE
from ..git.repo import GitRepo

HOOKS = ("pre-push", "post-commit", "commit-msg", "pre-receive")
CLIENT_DEFAULT = ("pre-push", "post-commit")
SERVER_DEFAULT = ("pre-receive",)
CHAIN_SUFFIX = ".lifeline-chained"
# Where the ledger tool is missing, a client hook lets git go on (the user may not
# have the tool on this machine); a server hook fails closed (never vouch blindly).
FAIL_CLOSED = frozenset({"pre-receive"})
# Shebangs of hooks that are run by sourcing them in a subshell, so that they see
# their own name in $0 (husky's hooks find what to run from it); any other hook is
# executed as it is.
SH_SHEBANGS = ("#!/bin/sh", "#!/usr/bin/env sh")


def _run_chained_sh() -> str:
    sourced = "|".join(f"'{s}'" for s in SH_SHEBANGS)
    return (
        f'lifeline_chained="$0{CHAIN_SUFFIX}"\n'
        "# the hook this one replaced: run first; a shell script is sourced in a subshell so\n"
        "# that $0 is still its own name (hook managers dispatch on it)\n"
        "lifeline_run_chained() {\n"
        '\t[ -x "$lifeline_chained" ] || return 0\n'
        '\tIFS= read -r lifeline_first < "$lifeline_chained" || :\n'
        '\tcase "$lifeline_first" in\n'
        f'\t{sourced}) ( . "$lifeline_chained" ) ;;\n'
        '\t*) "$lifeline_chained" "$@" ;;\n'
        "\tesac\n"
        "}\n"
    )


def _replaying_sh() -> str:
    actions = "|".join(f"{a}*" for a in REPLAY_ACTIONS)
    return (
        "# A commit git replays (rebase, cherry-pick, am, the end of a merge) is not new\n"
        "# work: say nothing, and do not start the tool.\n"
        "lifeline_replaying() {\n"
        f'\tcase "${{GIT_REFLOG_ACTION-}}" in {actions}) return 0 ;; esac\n'
        "\tlifeline_gd=$(git rev-parse --git-dir 2>/dev/null) || return 1\n"
        f"\tfor lifeline_f in {' '.join(REPLAY_STATE)}; do\n"
        '\t\t[ -e "$lifeline_gd/$lifeline_f" ] && return 0\n'
        "\tdone\n"
        "\tgit rev-parse -q --verify HEAD^2 >/dev/null 2>&1\n"
        "}\n"
        "if lifeline_replaying; then\n"
        '\tlifeline_run_chained "$@"\n'
        "\texit 0\n"
        "fi\n"
    )


def _recorded_sh() -> str:
    """The post-commit reminder's common silences, told from git alone (a few ms) so
    that an ordinary commit needing no reminder does not start the tool: reminders
    off, a commit naming a ledger entry, or a commit no newer than the last entry
    recorded on a line (and not dated after now: the tool weighs such a date against
    lifeline.maxClockSkew). What it cannot be sure of (a line whose tip is a pull's merge,
    a threshold above one) is left to the tool, which decides the same way
    (hooks.post_commit)."""
    return (
        "# An ordinary commit that needs no reminder does not start the tool either: reminders\n"
        "# off, a commit naming a ledger entry, or one no newer than a line's last append.\n"
        "lifeline_recorded() {\n"
        '\t[ "$(git config --type=bool lifeline.remind 2>/dev/null)" = false ] && return 0\n'
        "\tlifeline_after=$(git config --type=int lifeline.remindAfter 2>/dev/null) &&\n"
        '\t\t[ "$lifeline_after" -le 0 ] && return 0\n'
        "\tgit log -1 --format=%B HEAD 2>/dev/null | grep -qi '^lifeline:' && return 0\n"
        "\tlifeline_ct=$(git log -1 --format=%ct HEAD 2>/dev/null) || return 1\n"
        "\tcase $lifeline_ct in ''|*[!0-9]*) return 1 ;; esac\n"
        "\t# an append dated after now is left to the tool, which weighs it against\n"
        "\t# lifeline.maxClockSkew (a clock, or a date, from the future)\n"
        "\tlifeline_latest=$(date +%s)\n"
        "\tgit for-each-ref --format='%(committerdate:unix) %(refname) %(parent)' refs/lifeline/ 2>/dev/null | {\n"
        "\t\twhile read -r lifeline_t lifeline_ref lifeline_p lifeline_p2; do\n"
        "\t\t\tlifeline_line=${lifeline_ref#refs/lifeline/}\n"
        "\t\t\tcase $lifeline_line in [A-Za-z0-9]*) ;; *) continue ;; esac\n"
        "\t\t\tcase $lifeline_line in *[!A-Za-z0-9_-]*) continue ;; esac\n"
        "\t\t\tcase $lifeline_t in ''|*[!0-9]*) continue ;; esac  # git prints a negative date unsigned\n"
        "\t\t\t[ ${#lifeline_t} -le 10 ] && [ ${#lifeline_ct} -le 10 ] || continue\n"
        '\t\t\t[ ${#lifeline_line} -le 63 ] && [ -z "$lifeline_p2" ] && [ "$lifeline_t" -ge "$lifeline_ct" ] &&\n'
        '\t\t\t\t[ "$lifeline_t" -le "$lifeline_latest" ] && exit 0\n'
        "\t\tdone\n"
        "\t\texit 1\n"
        "\t}\n"
        "}\n"
        "if lifeline_recorded; then\n"
        '\tlifeline_run_chained "$@"\n'
        "\texit 0\n"
        "fi\n"
    )


def _missing_sh(name: str) -> str:
    """What a hook does when git-lifeline is not on PATH (every release's scripts alike)."""
    return (
        'echo "git-lifeline: not on PATH; refusing ledger updates until it is installed" >&2\nexit 1'
        if name in FAIL_CLOSED
        else f'echo "git-lifeline: not on PATH; its {name} check was skipped" >&2\nexit 0'
    )


def script_text(name: str, recorded_check: bool = True) -> str:
    """The sh script installed as hook `name` (identical to the one in hooks/).
    `recorded_check=False` gives the previous release's post-commit script (still ours)."""
    if name not in HOOKS:
        raise InputError(f"unknown hook {name!r}; known: {', '.join(HOOKS)}")
    missing = _missing_sh(name)
    return (
        "#!/bin/sh\n"
        f"# git-lifeline {name} hook. Installed by `git lifeline hooks install`;\n"
        "# removed (restoring the hook it replaced) by `git lifeline hooks uninstall`.\n"
        + _run_chained_sh()
        + (_replaying_sh() if name == "post-commit" else "")
        + (_recorded_sh() if name == "post-commit" and recorded_check else "")
        + "if command -v git-lifeline >/dev/null 2>&1; then\n"
        f'\texec git lifeline hook {name} "$@"\n'
        "fi\n"
        'lifeline_run_chained "$@" || exit $?\n'
        f"{missing}\n"
    )


def _first_script_text(name: str) -> str:
    """The script the first releases installed: still ours when found."""
    missing = _missing_sh(name)
    return (
        "#!/bin/sh\n"
        f"# git-lifeline {name} hook. Installed by `git lifeline hooks install`;\n"
        "# removed (restoring any hook it chains to) by `git lifeline hooks uninstall`.\n"
        "if command -v git-lifeline >/dev/null 2>&1; then\n"
        f'\texec git lifeline hook {name} "$@"\n'
        "fi\n"
        f'if [ -x "$0{CHAIN_SUFFIX}" ]; then\n'
        f'\t"$0{CHAIN_SUFFIX}" "$@" || exit $?\n'
        "fi\n"
        f"{missing}\n"
    )


def ours(path: Path, name: str) -> bool:
    """Whether the file at `path` is a hook script git-lifeline wrote, byte for byte
    (a symlink never is: it points at someone's file)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            data = f.read(16384)
    except OSError:
        return False
    return data in {
        script.encode("utf-8")
        for script in (script_text(name), script_text(name, recorded_check=False), _first_script_text(name))
    }


def hooks_dir(gr: GitRepo) -> Path:
    """Where git looks for hooks in this repository."""
    configured = gr.config_get("core.hooksPath")
    if configured:
        p = Path(os.path.expanduser(configured))
        if not p.is_absolute():
            p = (gr.workdir if gr.workdir is not None else gr.git_dir) / p
        return p
    return gr.common_dir / "hooks"


def tracked(gr: GitRepo, path: Path) -> bool:
    """Whether `path` is a file the repository tracks (a hooks directory in the work tree)."""
    if gr.workdir is None:
        return False
    try:
        top = gr.workdir.resolve()
        rel = path.parent.resolve().relative_to(top) / path.name
    except (OSError, ValueError):
        return False
    return gr.tracks(rel.as_posix())


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes() and bool(os.lstat(a).st_mode & stat.S_IXUSR) == bool(
            os.lstat(b).st_mode & stat.S_IXUSR
        )
    except OSError:
        return False


def _free_backup(chained: Path) -> Path:
    n = 1
    while True:
        candidate = chained.with_name(f"{chained.name}.{n}")
        if not (candidate.exists() or candidate.is_symlink()):
            return candidate
        n += 1


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


@dataclass
class HookState:
    name: str
    path: Path
    state: str  # installed | absent | foreign | tracked (a tracked hook not ours)
    chained: Optional[Path] = None  # the user's hook ours runs first


@dataclass
class HookChange:
    name: str
    path: Path
    action: str  # installed | updated | unchanged | removed | restored | left | tracked | absent
    chained: Optional[Path] = None
    kept: Optional[Path] = None  # an older backup kept aside (it no longer runs)


def status(gr: GitRepo) -> list[HookState]:
    d = hooks_dir(gr)
    out = []
    for name in HOOKS:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        if not _exists(path):
            state = "absent"
        elif ours(path, name):
            state = "installed"
        else:
            state = "tracked" if tracked(gr, path) else "foreign"
        out.append(HookState(name, path, state, chained if _exists(chained) else None))
    return out


def default_hooks(gr: GitRepo) -> tuple[str, ...]:
    return SERVER_DEFAULT if gr.is_bare else CLIENT_DEFAULT


def check_names(names: Iterable[str]) -> list[str]:
    bad = [n for n in names if n not in HOOKS]
    if bad:
        raise InputError(f"unknown hook(s) {', '.join(bad)}; known: {', '.join(HOOKS)}")
    return list(dict.fromkeys(names))


def _write_script(path: Path, name: str) -> None:
    tmp = path.with_name(f".{name}.lifeline-tmp")
    tmp.write_text(script_text(name), encoding="utf-8")
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
    os.replace(tmp, path)


def install(gr: GitRepo, names: Optional[list[str]] = None) -> list[HookChange]:
    """Install hooks (default: pre-push and post-commit; pre-receive in a bare repo).

    Every check runs before anything is written: either all hooks are installed or
    none is (a tracked hook is left as it is, and said so)."""
    names = check_names(names or default_hooks(gr))
    d = hooks_dir(gr)
    plan = []
    for name in names:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        if path.is_dir() or chained.is_dir():
            raise InputError(f"{path} is a directory; nothing was installed")
        if not _exists(path):
            plan.append((name, path, chained, "installed"))
        elif tracked(gr, path):
            plan.append((name, path, chained, "tracked"))
        elif ours(path, name):
            same = path.read_text(encoding="utf-8", errors="replace") == script_text(name) and _executable(path)
            plan.append((name, path, chained, "unchanged" if same else "updated"))
        else:
            plan.append((name, path, chained, "chain"))
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, path, chained, action in plan:
        kept = None
        if action == "tracked":
            out.append(HookChange(name, path, "tracked"))
            continue
        if action == "chain":
            # a non-executable hook stays so: git would not run it, and neither do we
            if _exists(chained):
                if _same_file(path, chained):
                    path.unlink()  # the same hook written again (a hook manager's reinstall)
                else:
                    kept = _free_backup(chained)
                    os.rename(chained, kept)
                    os.rename(path, chained)
            else:
                os.rename(path, chained)
            action = "installed"
        if action != "unchanged":
            _write_script(path, name)
        out.append(HookChange(name, path, action, chained if _exists(chained) else None, kept))
    return out


def uninstall(gr: GitRepo, names: Optional[list[str]] = None) -> list[HookChange]:
    names = check_names(names or HOOKS)
    d = hooks_dir(gr)
    out = []
    for name in names:
        path, chained = d / name, d / (name + CHAIN_SUFFIX)
        if _exists(path) and tracked(gr, path):
            out.append(HookChange(name, path, "tracked"))
            continue
        if _exists(path) and not ours(path, name):
            out.append(HookChange(name, path, "left"))
            continue
        removed = _exists(path)
        if removed:
            path.unlink()
        if _exists(chained):
            os.rename(chained, path)  # the bytes and the mode it had, under its own name
            out.append(HookChange(name, path, "restored", chained))
        else:
            out.append(HookChange(name, path, "removed" if removed else "absent"))
    return out
