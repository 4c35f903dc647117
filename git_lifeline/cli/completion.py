"""Shell completion that plugs into git's own: `git lifeline <TAB>` in bash, zsh and fish.

`git lifeline completion SHELL` prints a script to source. It defines what each shell's
git completion calls for an external command — `_git_lifeline` in bash (git's
completion calls `_git_<command>`), `_git-lifeline` in zsh (`_git` calls
`_git-<command>`), completions of the `git-lifeline` command in fish (git.fish hands
`git lifeline ...` to them) — and completes the `git-lifeline` command itself.

Every script asks the same hidden entry point for the candidates:
`git-lifeline __complete SHELL -- WORD... CURRENT`, the words after `lifeline`, the
last one being completed. It prints one candidate per line (for zsh and fish with a
tab and a description), or `:files` to ask for the shell's file completion. It never
fails: outside a repository, or on any error, it prints what it can.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import click

from .common import all_commands, short

if TYPE_CHECKING:  # annotations only: completion opens the workspace only when asked
    from ..app.workspace import Workspace

SHELLS = ("bash", "zsh", "fish")
FILES = ":files"
# (value, description) pairs, or FILES: let the shell complete file names
Candidates = Union[list[tuple[str, str]], str]

# What an option's value is, by option name.
_VALUE_KINDS = {
    "--kind": "kind",
    "--thread": "thread",
    "--line": "line",
    "--parents": "id",
    "--id": "id",
    "--color": "color",
    "--from": "from",
    "--to": "line",
    "--body-file": "file",
    "--answer-file": "file",
    "--paths": "file",
    "-o": "file",
    "--output": "file",
}
# What a command's positional arguments are.
_ARGUMENT_KINDS = {
    "show": "id",
    "revise": "id",
    "revert": "id",
    "pin": "in-force",
    "unpin": "in-force",
    "close": "open",
    "resolve": "conflicts",
    "where": "id",
    "why": "file",
    "completion": "shell",
    "fetch": "remote",
    "pull": "remote",
    "push": "remote",
    "sync": "remote",
    "remote-setup": "remote",
    "approve": "proposal",
    "reject": "proposal",
}
_GLOBAL_VALUE_OPTIONS = ("--line", "--color")


# ---- the scripts -------------------------------------------------------------------------
BASH = r"""# git-lifeline completion for bash: source it (e.g. from ~/.bashrc):
#   source <(git lifeline completion bash)
# `git lifeline <TAB>` goes through git's own completion, which calls _git_lifeline.
__git_lifeline_reply() {
    # $1: how to run git-lifeline; $2: the word being completed; then the words after
    # `lifeline`, the last one being the word completed
    local run="$1" cur="$2"; shift 2
    local candidates IFS=$'\n'
    candidates="$($run __complete bash -- "$@" 2>/dev/null)"
    if [ "$candidates" = ":files" ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null
        return 0
    fi
    # each candidate quoted for the shell (a pusher names a thread `x;touch f;#`), never
    # split on blanks nor globbed
    COMPREPLY=()
    local c
    while IFS= read -r c; do
        [ -n "$c" ] && COMPREPLY+=("$(printf '%q' "$c")")
    done <<< "$candidates"
    # --opt=value: readline completes the part after '=' (a word break)
    if [[ "$cur" == --*=* && "$COMP_WORDBREAKS" == *=* ]]; then
        local i
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[$i]="${COMPREPLY[$i]#*=}"; done
    fi
    if [[ "${COMPREPLY[*]}" == *= ]] && type compopt >/dev/null 2>&1; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}

__git_lifeline_run() {
    # git's completion knows `git -C DIR` and `--git-dir`: __git honours them
    if declare -F __git >/dev/null; then __git lifeline "$@"; else git-lifeline "$@"; fi
}

# Called by git's completion for `git lifeline ...` ($words, $cword, $cur are git's).
_git_lifeline() {
    local start=$(( ${__git_cmd_idx:-1} + 1 ))
    local args=("${words[@]:$start:$(( cword - start ))}")
    __git_lifeline_reply __git_lifeline_run "$cur" "${args[@]}" "$cur"
}

# The command itself: `git-lifeline ...`.
_git_lifeline_command() {
    local cur words cword
    if declare -F _get_comp_words_by_ref >/dev/null; then
        _get_comp_words_by_ref -n =: cur words cword
    else
        cur="${COMP_WORDS[COMP_CWORD]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    fi
    local args=("${words[@]:1:$(( cword - 1 ))}")
    __git_lifeline_reply git-lifeline "$cur" "${args[@]}" "$cur"
}
complete -o bashdefault -o default -F _git_lifeline_command git-lifeline
"""

ZSH = r"""#compdef git-lifeline
# git-lifeline completion for zsh: source it after compinit (e.g. from ~/.zshrc):
#   source <(git lifeline completion zsh)
# `git lifeline <TAB>` goes through zsh's git completion, which calls _git-lifeline.
_git-lifeline() {
    local -a out vals shown nospace_vals nospace_shown
    local line value
    out=("${(@f)$(git-lifeline __complete zsh -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if [[ "${out[1]}" == ":files" ]]; then
        _files
        return
    fi
    for line in "${out[@]}"; do
        [[ -z "$line" ]] && continue
        value="${line%%$'\t'*}"
        if [[ "$value" == *= ]]; then
            nospace_vals+=("$value"); nospace_shown+=("${line#*$'\t'}")
        else
            vals+=("$value"); shown+=("${line#*$'\t'}")
        fi
    done
    # no -Q: compadd quotes each value as it inserts it (a pusher's thread `x;touch f;#`)
    (( ${#vals} )) && compadd -l -d shown -- "${vals[@]}"
    (( ${#nospace_vals} )) && compadd -S '' -l -d nospace_shown -- "${nospace_vals[@]}"
    return 0
}
# zsh's git completion lists external commands it is told about.
() {
    local -a user_commands
    zstyle -a ':completion:*:*:git:*' user-commands user_commands
    if (( ! ${user_commands[(I)lifeline:*]} )); then
        zstyle ':completion:*:*:git:*' user-commands "${user_commands[@]}" 'lifeline:the reasoning ledger'
    fi
}
(( $+functions[compdef] )) && compdef _git-lifeline git-lifeline
"""

FISH = r"""# git-lifeline completion for fish: source it (e.g. from ~/.config/fish/config.fish):
#   git lifeline completion fish | source
function __git_lifeline_line
    # the command line's words, `git` and its global options dropped when it starts with git
    set -l words (commandline -opc)
    if test "$words[1]" = git
        set -e words[1]
        while set -q words[1]; and string match -q -- '-*' $words[1]
            if contains -- $words[1] -C -c --git-dir --work-tree --namespace --exec-path
                set -e words[1]
            end
            set -e words[1]
        end
    end
    printf '%s\n' $words
end
function __git_lifeline_words
    # the words after `lifeline` (or after the git-lifeline command)
    set -l words (__git_lifeline_line)
    set -e words[1]
    printf '%s\n' $words
end
function __git_lifeline_in_git
    set -l typed (commandline -opc)
    test "$typed[1]" = git; or return 1
    set -l words (__git_lifeline_line)
    test "$words[1]" = lifeline
end
function __git_lifeline_complete
    git-lifeline __complete fish -- (__git_lifeline_words) (commandline -ct) 2>/dev/null
end
complete -c git-lifeline -f -a '(__git_lifeline_complete)'
complete -c git -f -n __git_lifeline_in_git -a '(__git_lifeline_complete)'
"""


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish (plugs into git's completion)."""
    click.echo({"bash": BASH, "zsh": ZSH, "fish": FISH}[shell], nl=False)


# ---- the candidates ----------------------------------------------------------------------
def answer(args: list[str], root: click.Group) -> int:
    """`__complete SHELL -- WORD...`: print the candidates for the last word. Never fails."""
    shell = args[0] if args and args[0] in SHELLS else "bash"
    words = args[args.index("--") + 1 :] if "--" in args else args[1:]
    if len(words) > 1 and words[0] == "lifeline":  # a shell that handed over `git lifeline ...` whole
        words = words[1:]
    if not words:
        words = [""]
    try:
        found = candidates(root, words[:-1], words[-1])
    except Exception:  # a completion must never print a traceback into the shell
        found = []
    if isinstance(found, str):  # FILES
        click.echo(FILES)
        return 0
    for value, description in found:
        if any(ch in value for ch in "\n\r\t"):  # one candidate a line, a tab before its description
            continue
        if shell == "bash" or not description:
            click.echo(value)
        else:
            click.echo(f"{value}\t{_describe(value, description, shell)}")
    return 0


def _describe(value: str, description: str, shell: str) -> str:
    text = " ".join(description.split())[:70]
    return f"{value}  -- {text}" if shell == "zsh" else text


class _Words:
    """The words before the one being completed: the command, the line chosen."""

    def __init__(self, root: click.Group, before: list[str]):
        self.root = root
        self.line: Optional[str] = None
        self.command: Optional[click.Command] = None
        self.name: Optional[str] = None
        self.group: click.Group = root
        self.args: list[str] = []  # positional words after the command
        i = 0
        while i < len(before):
            word = before[i]
            if word == "--line" and i + 1 < len(before):
                self.line = before[i + 1]
                i += 2
                continue
            if word.startswith("--line="):
                self.line = word.split("=", 1)[1]
            elif self.command is None and not word.startswith("-"):
                found = self.group.get_command(click.Context(self.group), word)
                if found is None:
                    break
                if isinstance(found, click.Group):
                    self.group = found
                else:
                    self.command, self.name = found, word
            elif self.command is not None and not word.startswith("-"):
                prev = before[i - 1] if i else ""
                if not (prev.startswith("-") and _takes_value(self.command, prev)):
                    self.args.append(word)
            i += 1


def _takes_value(command: click.Command, opt: str) -> bool:
    for p in command.params:
        if isinstance(p, click.Option) and opt in p.opts + p.secondary_opts:
            return not p.is_flag and not p.count
    return False


def _options(params: list[click.Parameter]) -> list[tuple[str, str]]:
    out = []
    for p in params:
        if isinstance(p, click.Option) and not p.hidden:
            help_text = (p.help or "").split(". ")[0]
            for opt in p.opts + p.secondary_opts:
                if opt.startswith("--"):
                    out.append((opt + ("=" if not p.is_flag and opt in _GLOBAL_VALUE_OPTIONS else ""), help_text))
                elif len(opt) == 2:
                    out.append((opt, help_text))
    return out


def candidates(root: click.Group, before: list[str], current: str) -> Candidates:
    """(value, description) pairs for `current`, or FILES."""
    w = _Words(root, before)
    prev = before[-1] if before else ""
    if current.startswith("--") and "=" in current:
        opt, _, partial = current.partition("=")
        values = _values(_VALUE_KINDS.get(opt, ""), partial, w)
        if isinstance(values, str):
            return []  # a file after `--opt=`: nothing is offered
        return [(f"{opt}={v}", d) for v, d in values if v != FILES]
    if prev.startswith("-") and (prev in _GLOBAL_VALUE_OPTIONS if w.command is None else _takes_value(w.command, prev)):
        found = _values(_VALUE_KINDS.get(prev, ""), current, w)
        return FILES if found == FILES else found
    if w.command is None:
        if current.startswith("-"):
            params = w.group.params
            return [(o, d) for o, d in _options(params) + [("--help", "Show help.")] if o.startswith(current)]
        return [
            (name, (cmd.get_short_help_str(60) or ""))
            for name, cmd in sorted(all_commands(w.group).items())
            if name.startswith(current) and not cmd.hidden
        ]
    if current.startswith("-"):
        return [(o, d) for o, d in _options(w.command.params) + [("--help", "Show help.")] if o.startswith(current)]
    kind = _ARGUMENT_KINDS.get(w.name or "", "")
    if not kind or (w.args and kind not in ("proposal",)):
        return []
    found = _values(kind, current, w)
    return found


def _values(kind: str, current: str, w: _Words) -> Candidates:
    if kind in ("file", "from"):
        return FILES
    if kind == "kind":
        from .common import KIND_HELP

        return [(k, "") for k in KIND_HELP.split() if k.startswith(current)]
    if kind == "color":
        return [(v, "") for v in ("auto", "always", "never") if v.startswith(current)]
    if kind == "shell":
        return [(s, "") for s in SHELLS if s.startswith(current)]
    ws = _workspace()
    if ws is None:
        return []
    if kind == "line":
        return [(n, "") for n in ws.line_names() if n.startswith(current)]
    if kind == "remote":
        return [(r, "") for r in ws.remotes() if r.startswith(current)]
    led = ws.ledger(w.line)
    if kind == "thread":
        st = led.state()
        out = []
        for key in sorted(set(st.threads) | set(st.checkpoints)):
            label = key if len(key) != 64 else short(key)
            if label.startswith(current):
                out.append((label, st.by_id[key].summary if key in st.by_id else ""))
        return out
    if kind == "proposal":
        from ..app.agents import Agents

        props = Agents(led).proposals()
        out = [(p.short, f"{p.content.kind}: {p.content.summary}") for p in props if p.short.startswith(current)]
        return out + ([("all", "every pending proposal")] if "all".startswith(current) and props else [])
    from ..app.listing import id_candidates

    only = None if kind == "id" else kind
    return [(short(i), d) for i, d in id_candidates(led, current, only=only)]


def _workspace() -> Optional[Workspace]:
    from ..app.workspace import Workspace

    try:
        return Workspace.open()
    except Exception:
        return None
