"""Count the bare annotations of the package: the share of annotations (parameters, returns,
annotated assignments) that name `list`, `dict`, `tuple`, `set`, `frozenset`, `Any` or `object`
without saying what they hold, so the next clean-up can measure itself by the same rule.

    python tools/bare_annotations.py [PACKAGE_DIR] [--files N] [--where]

An annotation counts once however many bare names it holds; `Optional[dict]` is bare,
`dict[str, int]` is not. String annotations are parsed like the others.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator

BARE_NAMES = frozenset({"list", "dict", "tuple", "set", "frozenset", "Any", "object"})


def annotations(tree: ast.AST) -> Iterator[ast.expr]:
    """Every annotation written in `tree`: parameters, returns, annotated assignments."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if arg.annotation is not None:
                    yield arg.annotation
            for star in (arguments.vararg, arguments.kwarg):
                if star is not None and star.annotation is not None:
                    yield star.annotation
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def _parsed(annotation: ast.expr) -> ast.expr:
    """A string annotation as the expression it spells (itself when it does not parse)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return annotation
    return annotation


def is_bare(annotation: ast.expr) -> bool:
    """Whether the annotation names a container or Any/object without its contents."""
    root = _parsed(annotation)
    subscripted = {id(node.value) for node in ast.walk(root) if isinstance(node, ast.Subscript)}
    for node in ast.walk(root):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in BARE_NAMES and id(node) not in subscripted:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not root:
            if is_bare(node):
                return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default="git_lifeline")
    parser.add_argument("--files", type=int, default=15, help="how many files to list, most bare first")
    parser.add_argument("--where", action="store_true", help="list each bare annotation: path:line: annotation")
    options = parser.parse_args()
    total = bare = 0
    per_file: Counter[str] = Counter()
    root = Path(options.package)
    for path in sorted(root.rglob("*.py")):
        for annotation in annotations(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            total += 1
            if is_bare(annotation):
                bare += 1
                per_file[str(path.relative_to(root))] += 1
                if options.where:
                    print(f"{path}:{annotation.lineno}: {ast.unparse(annotation)}")
    share = 100.0 * bare / total if total else 0.0
    print(f"{bare} of {total} annotations bare ({share:.1f}%)")
    for name, count in per_file.most_common(options.files):
        print(f"{count:5d} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
