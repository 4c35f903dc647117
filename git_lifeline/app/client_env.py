"""Which agent clients' files set the environment of what they start (`doctor`, `status`).

A hook or MCP server entry that sets `PATH` (or any variable) decides which `git` and which
`git-lifeline` a session runs, and a clone can commit such a file: `.claude/settings.json`'s
top-level `env` applies to every hook Claude Code runs, an MCP entry's `env` to its server, and a
command written `PATH=./bin git-lifeline ...` or `env X=1 git-lifeline ...` to that command. We
never write one (app/agent_files.py, client_files.py); this module finds them and names the file
and the key, so that a human can tell. Files are read as init reads them: never through a link,
bounded in size and depth (core/json_input.py), a file that cannot be read is skipped (doctor's
other checks report it).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..core.json_input import JSONInputError, read_json
from ..git.fs import UnsafeFile, read_bounded

MAX_CLIENT_FILE_BYTES = 1 << 20
# Every file an agent client reads hooks, MCP servers or environment from, under the work tree.
NAMED_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".codex/config.toml")
CLIENT_DIRS = (".cursor", ".codex", ".gemini")  # each one's *.json files
MAX_FILES_PER_DIR = 32
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_ENV_KEYS = ("env", "environment")


@dataclass(frozen=True)
class EnvOverride:
    """A place in a client's file that sets environment variables for what the client starts."""

    file: str  # relative to the top of the work tree
    key: str  # where in the file, as a dotted path: `env`, `mcpServers.x.env`, `hooks.SessionStart[0]...`
    names: tuple[str, ...]  # the variables it sets (`-i`: it clears the environment)

    @property
    def sets_path(self) -> bool:
        return "PATH" in self.names or "-i" in self.names

    def message(self) -> str:
        said = ", ".join(self.names[:6]) + (f" and {len(self.names) - 6} more" if len(self.names) > 6 else "")
        why = (
            "PATH decides which git and git-lifeline run: a clone can point it at programs of its own"
            if self.sets_path
            else "what the client starts runs with them"
        )
        return f"{self.file}: {self.key} sets {said} ({why})"


def env_overrides(workdir: Path) -> list[EnvOverride]:
    """Every environment override in the agent clients' files of the work tree."""
    found: list[EnvOverride] = []
    for rel in _client_files(workdir):
        doc = _read(workdir / rel)
        if doc is not None:
            _walk(doc, rel, "", found)
    return found


def _client_files(workdir: Path) -> list[str]:
    rels = list(NAMED_FILES)
    for directory in CLIENT_DIRS:
        top = workdir / directory
        if top.is_symlink() or not top.is_dir():
            continue
        try:
            names = sorted(p.name for p in top.iterdir() if p.name.endswith(".json"))
        except OSError:
            continue
        rels += [f"{directory}/{name}" for name in names[:MAX_FILES_PER_DIR] if f"{directory}/{name}" not in rels]
    return rels


def _read(path: Path) -> Optional[object]:
    if path.is_symlink() or path.parent.is_symlink() or not path.is_file():
        return None
    try:
        data = read_bounded(path, MAX_CLIENT_FILE_BYTES, follow=False)
    except (OSError, UnsafeFile):
        return None
    if path.suffix == ".toml":
        try:
            import tomllib
        except ImportError:  # pragma: no cover - Python 3.10 only
            return None
        try:
            return tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            return None
    try:
        return read_json(data, MAX_CLIENT_FILE_BYTES)
    except JSONInputError:
        return None


def _walk(node: object, rel: str, where: str, found: list[EnvOverride]) -> None:
    """Find the overrides under `node` (JSON or TOML read with a bounded depth)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, rel, f"{where}[{i}]", found)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        here = f"{where}.{key}" if where else str(key)
        if key in _ENV_KEYS and isinstance(value, dict) and value:
            found.append(EnvOverride(rel, here, tuple(str(k) for k in value)))
        elif key == "command" and isinstance(value, str):
            args = node.get("args")
            names = _command_sets(value, args if isinstance(args, list) else [])
            if names:
                found.append(EnvOverride(rel, here, names))
        else:
            _walk(value, rel, here, found)


def _command_sets(command: str, args: list[str]) -> tuple[str, ...]:
    """The variables a command line sets before the program it runs: `A=1 B=2 prog`, `env A=1
    prog`, `env -i prog` (the environment cleared), or an MCP entry `{"command": "env", "args":
    ["A=1", ...]}`."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if len(words) == 1:  # an MCP entry: the program, then its arguments apart
        words = words + [a for a in args if isinstance(a, str)]
    names: list[str] = []
    rest = words
    if rest and (rest[0] == "env" or rest[0].endswith("/env")):
        rest = rest[1:]
        while rest and rest[0].startswith("-"):
            if rest[0] in ("-i", "--ignore-environment", "-"):
                names.append("-i")
            rest = rest[1:]
    while rest and _ASSIGNMENT.match(rest[0]):
        names.append(rest[0].split("=", 1)[0])
        rest = rest[1:]
    return tuple(names)
