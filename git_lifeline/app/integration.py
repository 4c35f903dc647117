"""How clients start git-lifeline: the command they run, the `.mcp.json` entry, the other
clients' snippets.

A client (an MCP client, an agent's hook) runs a command with its own PATH, which is often
not the shell's. `git lifeline ...` is the portable form (no machine path: fit to commit) and
is used when `git-lifeline` is on PATH and actually starts; otherwise the command names this
machine's interpreter (`<python> -m git_lifeline ...`). Either way it is checked by running
it (`mcp --check`), never assumed. No MCP SDK here: `init` must stay light.
The snippets are described in docs/INTEGRATION.md.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

from ..core.json_input import JSONInputError, JSONValue, read_json
from ..git.fs import write_in_worktree
from ..git.programs import Probe, probe

SERVER_NAME = "lifeline"
MCP_JSON = ".mcp.json"
PORTABLE = ("git", "lifeline")
# What a client would not pass on to the program it starts: the check runs without it.
CLIENT_DROPS = ("PYTHONPATH",)
MAX_CONFIG_BYTES = 1024 * 1024  # a client's configuration; never read a hostile file unbounded


# a stdio server's entry under "mcpServers": its command and arguments
ServerEntry = dict[str, Union[str, list[str]]]


@dataclass(frozen=True)
class Launcher:
    """How a client starts git-lifeline: `prefix` + the command's own arguments."""

    prefix: tuple[str, ...]

    @property
    def portable(self) -> bool:
        return self.prefix == PORTABLE

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, *args]

    def shell(self, *args: str) -> str:
        return shlex.join(self.argv(*args))

    def server_entry(self, repo: Optional[Path] = None) -> ServerEntry:
        """The stdio server entry. Without `repo` the client must start it in the repository
        (Claude Code and Cursor do, for a project file); with it, the server is pointed there."""
        if self.portable:
            return {"command": "git", "args": (["-C", str(repo)] if repo is not None else []) + ["lifeline", "mcp"]}
        args = [*self.prefix[1:], "mcp"] + (["--repo", str(repo)] if repo is not None else [])
        return {"command": self.prefix[0], "args": args}


def safe_path_flags(version: tuple[int, ...]) -> tuple[str, ...]:
    """-m puts the current directory first on sys.path, and a client starts the server (and
    a hook) in the repository: a work tree holding a git_lifeline/ package would be what ran.
    -P (Python 3.11+) leaves it off. Python 3.10 has no -P; its isolated mode (-I) leaves it
    off too, and also ignores PYTHON* variables and the user's site-packages (an installation
    there fails the check init runs, and init says so: put git-lifeline on PATH)."""
    return ("-P",) if version >= (3, 11) else ("-I",)


SAFE_PATH = safe_path_flags(tuple(sys.version_info[:2]))
WRITTEN_FLAGS = {safe_path_flags((3, 10)), safe_path_flags((3, 11))}  # an entry another Python wrote


def interpreter() -> Launcher:
    """This very installation, by its interpreter's path (a venv's python stays the venv's:
    the path is made absolute, not resolved through its symlink)."""
    return Launcher((os.path.abspath(sys.executable), *SAFE_PATH, "-m", "git_lifeline"))


def candidates() -> list[Launcher]:
    """The launchers to try, portable first when git would find git-lifeline at all."""
    found = shutil.which("git") and shutil.which("git-lifeline")
    return ([Launcher(PORTABLE)] if found else []) + [interpreter()]


MCP_CHECK = ("mcp", "--check")  # the server answers whether it could serve, and exits
STARTS = ("--version",)  # enough for a hook's command


def check_launcher(launcher: Launcher, cwd: Path, args: tuple[str, ...] = MCP_CHECK) -> Probe:
    """Run the launcher the way a client would (for `cwd`, without what it would not pass on).
    `<python> -m git_lifeline` is run from its interpreter's directory, pointed at `cwd` with
    --repo: -m puts the current directory first on sys.path, and a work tree holding a
    git_lifeline/ package would be what ran."""
    if launcher.portable:
        return probe(launcher.argv(*args), cwd=str(cwd), drop_env=CLIENT_DROPS)
    extra = ("--repo", str(cwd)) if tuple(args) == MCP_CHECK else ()
    return probe(launcher.argv(*args, *extra), cwd=str(Path(launcher.prefix[0]).parent), drop_env=CLIENT_DROPS)


@dataclass(frozen=True)
class Resolved:
    launcher: Launcher
    check: Optional[Probe]  # None: not checked


def resolve_launcher(workdir: Path, args: Optional[tuple[str, ...]] = MCP_CHECK) -> Resolved:
    """The first launcher that passes the check (`args`: default, the MCP server's) from
    `workdir`; when none does, the first one, with the failed check (its output says what
    to fix). `args` None: not checked."""
    tried = candidates()
    if args is None:
        return Resolved(tried[0], None)
    first: Optional[Resolved] = None
    for launcher in tried:
        result = Resolved(launcher, check_launcher(launcher, workdir, args))
        if result.check is not None and result.check.ok:
            return result
        first = first or result
    assert first is not None
    return first


# ---- what counts as ours -------------------------------------------------------------------
# The name of an interpreter init writes (sys.executable's): python, python3, python3.N, and
# python3.Nt for a free-threaded build.
_INTERPRETER = re.compile(r"python(?:3(?:\.[0-9]+t?)?)?")


def is_interpreter(command: str) -> bool:
    """Whether `command` names a Python interpreter as init writes one: this one by its path,
    or any by its file name (the path is a machine's own, a venv's bin/). A file named
    otherwise (`/tmp/evil`, `sh`) is another program however much of git-lifeline's
    arguments follow it."""
    return command == os.path.abspath(sys.executable) or _INTERPRETER.fullmatch(os.path.basename(command)) is not None


def our_arguments(argv: Sequence[JSONValue]) -> Optional[list[str]]:
    """The git-lifeline arguments `argv` runs when it is a command init writes (`git [-C DIR]
    lifeline ...`, or `<python> [-P|-I] -m git_lifeline ...`: no flag is what init wrote before
    safe_path_flags), None for any other command. The one rule for .mcp.json's entry and for
    the agents' hooks: what matches is init's to bring up to date, the rest is left as it is."""
    words = [a for a in argv if isinstance(a, str)]
    if not words or len(words) != len(argv):
        return None
    command, args = words[0], words[1:]
    if command == "git":
        rest = args[2:] if args[:1] == ["-C"] else args
        return rest[1:] if rest[:1] == ["lifeline"] else None
    if not is_interpreter(command):
        return None
    if tuple(args[:1]) in WRITTEN_FLAGS:
        args = args[1:]
    return args[2:] if args[:2] == ["-m", "git_lifeline"] else None


def borrows_our_arguments(argv: Sequence[JSONValue]) -> bool:
    """Whether a command that is not ours names git-lifeline anyway (`/tmp/evil -m git_lifeline
    mcp`): worth a warning, not a quiet "another program"."""
    return any(a in ("git_lifeline", "git-lifeline", "lifeline") for a in map(str, argv[1:]))


FOREIGN = "not an entry git lifeline init writes"


# ---- .mcp.json ---------------------------------------------------------------------------
def is_our_entry(entry: JSONValue) -> bool:
    """Whether a server entry is one git-lifeline writes (any of its forms, the `--repo` of a
    snippet's included), so that init may bring it up to date; anything else under the name is
    the user's and is kept."""
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
        return False
    rest = our_arguments([entry.get("command"), *entry["args"]])
    return rest == ["mcp"] or (rest is not None and len(rest) == 3 and rest[:2] == ["mcp", "--repo"])


def entry_argv(entry: JSONValue) -> list[str]:
    """An entry's command line, for showing it: whatever the entry holds, as strings."""
    if not isinstance(entry, dict):
        return [str(entry)]
    args = entry.get("args", [])
    return [str(entry.get("command", "")), *map(str, args if isinstance(args, list) else [args])]


NOT_STARTED = (
    "not started: it is not the command this installation writes (git lifeline mcp, or this "
    f"interpreter with {' '.join((*SAFE_PATH, '-m', 'git_lifeline', 'mcp'))}), and a command a "
    "repository's file names is never run"
)


def check_entry(entry: dict, cwd: Path) -> Probe:
    """Start an entry of ours as the client would, with `--check` (it answers and exits), when
    it is exactly what this installation writes. Any other command is not run: .mcp.json is a
    file of the work tree, and `sh -m git_lifeline mcp` looks like ours while it runs a file
    of the repository."""
    for launcher in (Launcher(PORTABLE), interpreter()):
        if entry == launcher.server_entry():
            return check_launcher(launcher, cwd)
    return Probe(False, None, NOT_STARTED)


@dataclass
class McpJsonResult:
    status: str  # created | added | updated | kept | invalid
    detail: str
    entry: Optional[dict] = None  # the lifeline entry the file holds now
    check: Optional[Probe] = None  # the check of that entry, when one was run


def read_mcp_json(workdir: Path) -> tuple:
    """(the document or None, a problem or None). A missing file is (None, None)."""
    path = workdir / MCP_JSON
    if not path.exists() and not path.is_symlink():
        return None, None
    if path.is_symlink() or not path.is_file():
        return None, f"{path} is not a regular file; left it untouched"
    if path.stat().st_size > MAX_CONFIG_BYTES:
        return None, f"{path} is larger than {MAX_CONFIG_BYTES} bytes; left it untouched"
    try:
        doc = read_json(path.read_bytes(), MAX_CONFIG_BYTES)
    except (OSError, JSONInputError) as exc:
        return None, f"{path} is not readable JSON ({exc}); left it untouched"
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or (servers is not None and not isinstance(servers, dict)):
        return None, f"{path} has no mcpServers object; left it untouched"
    return doc, None


def install_mcp_json(workdir: Path, resolved: Resolved) -> McpJsonResult:
    """Add the `lifeline` server to `<workdir>/.mcp.json`. Another program's entry under that
    name is never replaced; an entry of ours that does not start is replaced by one that does."""
    path = workdir / MCP_JSON
    entry = resolved.launcher.server_entry()
    doc, problem = read_mcp_json(workdir)
    if problem is not None:
        return McpJsonResult("invalid", problem)
    if doc is None:
        _write(workdir, path, {"mcpServers": {SERVER_NAME: entry}})
        return McpJsonResult("created", str(path), entry, resolved.check)
    servers = doc.setdefault("mcpServers", {})
    current = servers.get(SERVER_NAME)
    if current is not None:
        if current == entry:
            return McpJsonResult("kept", f"{path} already starts the server", current, resolved.check)
        if not is_our_entry(current):
            return McpJsonResult(
                "kept",
                f"{path} already has a server named {SERVER_NAME!r} "
                f"({json.dumps(current, ensure_ascii=False)}); left it as it is",
                current,
            )
        works = check_entry(current, workdir)
        if works.ok or not (resolved.check and resolved.check.ok):
            return McpJsonResult("kept", f"{path} already starts the server", current, works)
        servers[SERVER_NAME] = entry
        _write(workdir, path, doc)
        return McpJsonResult(
            "updated", f"{path} (its entry did not start: {works.output or 'no output'})", entry, resolved.check
        )
    servers[SERVER_NAME] = entry
    _write(workdir, path, doc)
    return McpJsonResult("added", str(path), entry, resolved.check)


def _write(workdir: Path, path: Path, doc: dict) -> None:
    write_in_worktree(workdir, path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def snippets(repo: Path, launcher: Launcher) -> list[tuple[str, str, ServerEntry]]:
    """(client, where its configuration goes, the server entry under "mcpServers") for the
    clients configured by hand. Project files keep the entry free of machine paths when
    the launcher allows it."""
    return [
        (
            "Claude Desktop",
            "claude_desktop_config.json (it starts servers outside the repository)",
            launcher.server_entry(repo),
        ),
        ("Cursor", ".cursor/mcp.json in the repository", launcher.server_entry()),
        ("Gemini CLI", ".gemini/settings.json in the repository", launcher.server_entry()),
        (
            "Codex",
            ".codex/config.toml in the repository (a trusted project), as [mcp_servers.lifeline]",
            launcher.server_entry(),
        ),
    ]
