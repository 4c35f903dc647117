"""Typed data from the faces to the engine, checked on the source: an entry travels as a
Draft (app/draft.py), never as a dict of keyword fields, and the faces read a review
record's attributes (git/records.py Record), never the keys of its JSON document."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "git_lifeline"
TYPED_LAYERS = ("app", "cli", "mcp")  # where what a user or an agent asks for is carried
FACES = ("cli", "mcp")


def _sources(layers: tuple[str, ...]) -> list[Path]:
    return [p for layer in layers for p in sorted((PKG / layer).rglob("*.py"))]


def test_no_function_of_the_use_cases_or_faces_takes_fields_as_keyword_arguments():
    found = []
    for path in _sources(TYPED_LAYERS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.kwarg is not None:
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}(**{node.args.kwarg.arg})")
    assert not found, "functions taking **kwargs (build a Draft, a Writer or Headers instead):\n" + "\n".join(found)


def test_the_faces_read_review_records_by_attribute_never_by_key():
    found = []
    for path in _sources(FACES):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "doc":
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert not found, "a face reads a record's JSON document (use its attributes):\n" + "\n".join(found)
