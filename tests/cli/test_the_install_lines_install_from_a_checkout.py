"""The install lines of the README work as written: from a checkout, with extras that exist."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT


def test_the_install_lines_install_from_a_checkout_with_extras_that_exist():
    # `pip install 'git-lifeline[mcp]'` failed: the package is on no registry
    tomllib = pytest.importorskip("tomllib")
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        line
        for doc in (readme, (ROOT / "docs" / "INTEGRATION.md").read_text(encoding="utf-8"))
        for line in doc.splitlines()
        if "pip install" in line
    ]
    assert lines
    for line in lines:
        for target in re.findall(r"pip install (?:-\S+ )*('?[^\s']+'?)", line):
            target = target.strip("'")
            assert target.startswith("."), f"not from a checkout: {line}"
            named = re.fullmatch(r"\.(?:\[([a-z,]+)\])?", target)
            assert named, line
            assert set(filter(None, (named.group(1) or "").split(","))) <= extras, line
    assert {"mcp", "semantic"} <= extras and "'.[semantic]'" in readme and "'.[mcp]'" in readme
