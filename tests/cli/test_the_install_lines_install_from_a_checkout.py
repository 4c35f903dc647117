"""The install lines of the README work as written: from a checkout, with extras that exist."""

from __future__ import annotations

import re

import pytest
from kit.run import ROOT


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


def test_the_readme_installs_with_pipx_and_uv_and_ci_tries_exactly_those_lines():
    # `python3 -m pip install .` fails on Debian's system Python: externally-managed-environment
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "python3 -m pip install" not in install, "Debian's system pip refuses to install"
    assert "pipx install '.[mcp]'" in install and "uv tool install '.[mcp]'" in install
    tried = (ROOT / ".ci" / "try-install").read_text(encoding="utf-8")
    assert "pipx install -q '.[mcp]'" in tried and "uv tool install -q '.[mcp]'" in tried
    assert ".ci/try-install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    first = next(line for line in readme.splitlines() if "docs/demo.sh" in line and "venv" in line)
    assert "'.[mcp]'" in first, "without the MCP extra the demo's init says the server does not start"


def test_no_hint_the_tool_prints_names_a_package_no_index_holds():
    # every hint said `pip install 'git-lifeline[mcp]'`, which resolves on no index
    from git_lifeline.errors import install_hint

    sources = [p for p in (ROOT / "git_lifeline").rglob("*.py")]
    offenders = [str(p) for p in sources if "git-lifeline[" in p.read_text(encoding="utf-8")]
    assert not offenders, offenders
    assert "pipx install --force '.[mcp]'" in install_hint("mcp") and "from a checkout" in install_hint("mcp")
