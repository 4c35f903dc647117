"""The README's command table is one table (a blank line split it in two, so the rows after
it rendered as text) and lists the sync commands; the `Lifeline:` trailer it names is shown
in an example commit message."""

from __future__ import annotations

import re

from kit.run import ROOT


def cli_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("\n## CLI\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_command_table_is_one_table_naming_the_sync_commands():
    lines = cli_section().splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("| `git lifeline ")]
    assert rows == list(range(rows[0], rows[0] + len(rows))), "the command table is split"
    table = "\n".join(lines[i] for i in rows)
    for command in ("fetch", "pull", "push", "sync", "clone"):
        assert f"| `git lifeline {command} " in table, command


def test_the_readme_shows_a_commit_message_with_a_lifeline_trailer():
    blocks = re.findall(r"```\n(.*?)```", cli_section(), re.S)
    assert any(re.search(r"^Lifeline: [0-9a-f]{6,64}$", block, re.M) for block in blocks), blocks
