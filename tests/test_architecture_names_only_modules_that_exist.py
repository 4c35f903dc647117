"""docs/ARCHITECTURE.md is the map a reader trusts for ten minutes: every module file it
names must exist. A path (`git/trees.py`, `tests/test_layers.py`) anywhere in it, and a
backticked module (`trees.py`) in one of its tables, that names no file fails here, so a
module removed or renamed takes its line in the map with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "git_lifeline"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)+[\w-]+\.py)\b")
BACKTICKED = re.compile(r"`([\w-]+\.py)`")
LAYER_MODULE = re.compile(r"`((?:core|git|views|app|cli|mcp)/\w+)`")  # `git/lines`: a module by its dotted name
TOP = ("tests/", "bench/", "tools/", "git_lifeline/", "docs/")


def missing_paths(text: str) -> list:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for path in PATH.findall(line):
            where = ROOT / path if path.startswith(TOP) else PKG / path
            if not where.is_file():
                out.append(f"line {n}: {path}")
        for module in LAYER_MODULE.findall(line):
            if not (PKG / f"{module}.py").is_file() and not (PKG / module).is_dir():
                out.append(f"line {n}: {module}")
    return out


def missing_table_modules(text: str) -> list:
    modules = {p.name for p in PKG.rglob("*.py")}
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("|"):
            out += [f"line {n}: {name}" for name in BACKTICKED.findall(line) if name not in modules]
    return out


def test_the_architecture_names_no_module_file_that_does_not_exist():
    text = DOC.read_text(encoding="utf-8")
    missing = missing_paths(text) + missing_table_modules(text)
    assert not missing, "docs/ARCHITECTURE.md names modules that do not exist:\n" + "\n".join(missing)


def test_a_removed_module_named_in_the_architecture_is_caught():
    assert missing_paths("see `git/review.py` and git/trees.py") == ["line 1: git/review.py"]
    assert missing_paths("imports `git/lines`, `git/review`") == ["line 1: git/review"]
    assert missing_table_modules("| `facade.py` | the old Ledger |\n| `trees.py` | x |") == ["line 1: facade.py"]
