"""Real shells completing `git lifeline`: git's own bash completion script (where installed),
our completion script for a shell, and the drivers that make bash and zsh complete a line."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from kit.run import LONG_TIMEOUT, cli, subprocess_env

GIT_BASH_COMPLETION = next(
    (
        p
        for p in (
            Path("/usr/share/bash-completion/completions/git"),
            Path("/usr/share/git-core/contrib/completion/git-completion.bash"),
            Path("/etc/bash_completion.d/git"),
        )
        if p.exists()
    ),
    None,
)


def script(shell: str) -> str:
    """Our completion script for `shell`, as `git lifeline completion SHELL` prints it."""
    res = cli(Path.cwd(), "completion", shell)
    assert res.code == 0, res
    return res.out


# ---- bash, through git's own completion ------------------------------------------------------
BASH_DRIVER = r"""
source "$GIT_COMPLETION"
source "$OUR_COMPLETION"
complete_line() {
    # readline's view of a command line: the words, the last one being completed
    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    if [ "$1" = git ]; then __git_wrap__git_main; else _git_lifeline_command; fi
    printf '%s\n' "${COMPREPLY[@]}"
    echo "=="
}
"""


def bash_complete(repo: Path, tmp_path: Path, *lines: Sequence[str]) -> list[list[str]]:
    """What bash offers for each command line (its words, the last being completed), through
    git's completion with ours sourced."""
    ours = tmp_path / "lifeline.bash"
    ours.write_text(script("bash"))
    calls = "".join("complete_line " + " ".join(f"'{w}'" for w in words) + "\n" for words in lines)
    env = subprocess_env({"GIT_COMPLETION": str(GIT_BASH_COMPLETION), "OUR_COMPLETION": str(ours)})
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", BASH_DRIVER + calls],
        cwd=repo,
        env=env,
        capture_output=True,
        timeout=LONG_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    replies = proc.stdout.decode().split("==\n")[:-1]
    return [[w for w in r.split("\n") if w] for r in replies]


# ---- zsh --------------------------------------------------------------------------------------
ZSH_DRIVER = r"""
compdef() { :; }
zstyle() { builtin zstyle "$@"; }
compadd() {
    # what the function offers: the values after `--`
    local seen=0 a
    for a in "$@"; do
        if (( seen )); then print -r -- "$a"; fi
        [[ "$a" == "--" ]] && seen=1
    done
}
_files() { print -r -- ":files:"; }
source "$OUR_COMPLETION"
words=(lifeline list --kind de); CURRENT=4; _git-lifeline; print -r -- '=='
words=(git-lifeline sh); CURRENT=2; _git-lifeline; print -r -- '=='
words=(lifeline import --from ""); CURRENT=4; _git-lifeline; print -r -- '=='
zstyle -a ':completion:*:*:git:*' user-commands cmds; print -r -- "${cmds[@]}"
"""
