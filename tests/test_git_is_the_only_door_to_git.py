"""git/ is the only door to git, argv included: no module above it writes a git command
line (a call of GitRepo.git or run_git, or a list literal starting with "git")
or reaches into the repository object's private state (`gr._config`). What a use case
needs of git is a named function or method in git/, so the command lines, their options
and how their output is read live in one layer."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "git_lifeline"
ABOVE_GIT = ("views", "app", "cli", "mcp")
RUNNERS = {"git", "run_git"}


def offences(path: Path) -> list:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in RUNNERS:
                found.append(f"{node.lineno}: calls {name}(...)")
        elif isinstance(node, ast.List) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                found.append(f"{node.lineno}: builds a git command line")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) and node.attr == "_config":
                found.append(f"{node.lineno}: reaches into {ast.unparse(node)}")
    return found


def test_no_layer_above_git_builds_a_git_command_line_or_touches_the_repositorys_private_state():
    bad = [
        f"{path.relative_to(PKG.parent)}:{where}"
        for layer in ABOVE_GIT
        for path in sorted((PKG / layer).rglob("*.py"))
        for where in offences(path)
    ]
    assert not bad, "git command lines above git/:\n" + "\n".join(bad)
