"""What tests share lives in the helper kit, tests/kit/: a test module never imports another
test module (its helpers would be two things at once, and a rename of a test breaks others),
and only kit/run.py starts the git executable as a command (`git(cwd, *args)`), so every
test's git runs with one environment and one timeout. A long-running `git daemon` is a
server, started in kit/servers.py."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
KIT = TESTS / "kit"
SERVERS = {KIT / "run.py": "git", KIT / "servers.py": "daemon"}  # the one runner, the one server
STARTERS = {"run", "Popen", "check_output", "check_call", "call"}  # subprocess's ways to start a process


def sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts)


def imports_of_test_modules(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        found += [f"{node.lineno}: imports {n}" for n in names if n.split(".")[0].startswith("test_")]
    return found


def git_command_lines(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, second word) of every process started with a list literal that begins with "git"."""
    found = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if isinstance(node, ast.Call) and name in STARTERS:
            for arg in node.args:
                if isinstance(arg, ast.List) and arg.elts:
                    first = arg.elts[0]
                    if isinstance(first, ast.Constant) and first.value in ("git", b"git"):
                        second = arg.elts[1] if len(arg.elts) > 1 else None
                        word = second.value if isinstance(second, ast.Constant) else ""
                        found.append((node.lineno, str(word)))
    return found


def test_no_test_module_imports_another_test_module():
    bad = [
        f"{path.relative_to(TESTS)}:{where}"
        for path in sources()
        for where in imports_of_test_modules(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not bad, "move what tests share into tests/kit/:\n" + "\n".join(bad)


def test_only_the_kit_starts_the_git_executable():
    bad = []
    for path in sources():
        for line, word in git_command_lines(ast.parse(path.read_text(encoding="utf-8"))):
            allowed = SERVERS.get(path)
            if allowed is None or (allowed == "daemon" and word != "daemon"):
                bad.append(f"{path.relative_to(TESTS)}:{line}: runs git {word} by hand")
    assert not bad, "run git through kit.run.git:\n" + "\n".join(bad)
