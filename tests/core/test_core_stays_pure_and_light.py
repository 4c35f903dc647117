"""core/ stays pure and cheap to load: the CLI's everyday commands never pay pydantic's
start-up, and the write policy is parsed from text, with no repository in sight (app/agents.py
reads it through git/; tests/app/test_review.py and tests/security/test_policy_is_read_from_a_trusted_ref.py
hold that path)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from kit.entries import make_entry
from kit.repos import open_ledger
from kit.run import ROOT, subprocess_env

from git_lifeline.core.policy import Policy, PolicyError, parse_policy

# Runs the real CLI in this process and says, on exit, whether pydantic was ever imported.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\npydantic loaded: %s\\n" % ("pydantic" in sys.modules)))
sys.argv = ["git-lifeline", *sys.argv[1:]]
from git_lifeline.cli.main import run
run()
"""


def loads_pydantic(repo, *args: str) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=str(repo),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("pydantic loaded: "), proc.stderr
    return last.endswith("True")


@pytest.mark.parametrize(
    "args",
    [
        ("log", "--kind", "note", "--summary", "First words", "--body", "Because."),
        ("context",),
        ("recall", "words"),
        ("list",),
        ("verify",),
    ],
)
def test_everyday_commands_never_pay_for_pydantic(repo, args):
    if args[0] != "log":
        open_ledger(repo).append([make_entry(1)])
    assert not loads_pydantic(repo, *args)


@pytest.mark.parametrize("module", ["git_lifeline.core.entry", "git_lifeline.core.policy"])
def test_the_entry_and_policy_modules_import_nothing_beyond_the_standard_library(module):
    code = (
        f"import json, sys; before = set(sys.modules); import {module}; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    third_party = [
        m
        for m in json.loads(out.stdout)
        if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("git_lifeline")
    ]
    assert third_party == []


# ---- the policy: parsed from the text git/ read --------------------------------------------
def test_the_policy_is_parsed_from_text_without_a_repository():
    builtin = Policy(source="built-in default")
    assert builtin.builtin and (builtin.decide("x", "checkpoint").mode, builtin.decide("x", "note").mode) == (
        "direct",
        "propose",
    )
    pol = parse_policy('{"default": "direct", "agents": {"bot": {"note": "deny"}}}', "main:.lifeline/policy.json")
    assert (pol.source, pol.builtin, pol.decide("bot", "note").mode, pol.decide("x", "fix").mode) == (
        "main:.lifeline/policy.json",
        False,
        "deny",
        "direct",
    )
    with pytest.raises(PolicyError, match="not valid JSON"):
        parse_policy('{"default":', "main:.lifeline/policy.json")
