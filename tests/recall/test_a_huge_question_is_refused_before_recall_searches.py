"""Recall's cost follows the question's length: a megabyte question is refused clearly,
not searched for minutes.
"""

from __future__ import annotations

import subprocess
import sys

from kit.entries import make_entry
from kit.repos import init_repo
from kit.run import subprocess_env
from kit.tamper import store_as_is


def test_a_megabyte_question_is_refused_clearly_instead_of_holding_recall_for_minutes(tmp_path):
    """No bound on the question made concepts() cost ~0.5 ms a word and each concept one
    more FTS query: a 1 MB question from an agent held the MCP tool for minutes. It is now
    refused at once with a message saying the limit; a paragraph is still answered."""
    repo = init_repo(tmp_path / "a")
    store_as_is(repo, "main", make_entry(1, summary="Database: PostgreSQL"))
    script = (
        "import sys; from git_lifeline.app.workspace import Workspace; from git_lifeline.errors import InputError\n"
        "led = Workspace.open(sys.argv[1]).ledger()\n"
        "q = ' '.join(f'w{i}q' for i in range(150_000)) + ' postgres'\n"
        "try:\n    led.recall(q)\nexcept InputError as exc:\n    print('refused:', exc)\n"
        "print(len(led.recall('which database, PostgreSQL or not? ' * 100)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(repo)], capture_output=True, env=subprocess_env(), timeout=120
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "refused: the question is" in out and "at most 4000" in out, out
    assert out.strip().splitlines()[-1] == "1", out
