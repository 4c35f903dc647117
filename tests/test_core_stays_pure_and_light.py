"""core/ stays pure and cheap to load: the CLI's everyday commands never pay pydantic's
start-up, and the write policy is parsed from bytes, with no repository in sight."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import ROOT, make_entry, open_ledger, subprocess_env

from git_lifeline.core.policy import (
    HEAD_SOURCE,
    NO_COMMIT,
    NOT_AT_HEAD,
    PolicyError,
    load_policy,
    policy_from_blob,
    policy_source,
)

# Runs the real CLI in this process and says, on exit, whether pydantic was ever imported.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\npydantic loaded: %s\\n" % ("pydantic" in sys.modules)))
sys.argv = ["git-lifeline", *sys.argv[1:]]
from git_lifeline.cli.main import run
run()
"""


def loads_pydantic(repo, *args: str) -> bool:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=str(repo), capture_output=True, text=True,
                          env=subprocess_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("pydantic loaded: "), proc.stderr
    return last.endswith("True")


@pytest.mark.parametrize("args", [
    ("log", "--kind", "note", "--summary", "First words", "--body", "Because."),
    ("context",),
    ("recall", "words"),
    ("list",),
    ("verify",),
])
def test_everyday_commands_never_pay_for_pydantic(repo, args):
    if args[0] != "log":
        open_ledger(repo).append([make_entry(1)])
    assert not loads_pydantic(repo, *args)


def test_the_entry_module_imports_nothing_beyond_the_standard_library():
    code = ("import json, sys; before = set(sys.modules); import git_lifeline.core.entry; "
            "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    third_party = [m for m in json.loads(out.stdout)
                   if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("git_lifeline")]
    assert third_party == []


# ---- the policy: parsed from what git/ read ----------------------------------------------
def test_the_policy_is_parsed_from_bytes_without_a_repository():
    assert policy_from_blob(None, NO_COMMIT).builtin and policy_from_blob(None, NO_COMMIT).source == NO_COMMIT
    pol = policy_from_blob(b'{"default": "direct", "agents": {"bot": {"note": "deny"}}}')
    assert (pol.source, pol.builtin, pol.decide("bot", "note").mode, pol.decide("x", "fix").mode) == \
        (HEAD_SOURCE, False, "deny", "direct")
    with pytest.raises(PolicyError, match="not valid UTF-8"):
        policy_from_blob(b'{"default": "\xff"}')
    with pytest.raises(PolicyError, match="not valid JSON"):
        policy_from_blob(b'{"default":')


def test_the_work_tree_copy_is_reported_but_never_applies():
    src = policy_source(b'{"default": "deny"}\n', NOT_AT_HEAD, '{"default": "direct"}\n')
    assert src.policy.default == "deny" and src.worktree_differs


def test_load_policy_reads_through_the_reader_it_is_given():
    seen = []

    def reader(gr):
        seen.append(gr)
        return b'{"kinds": {"note": "deny"}}', NOT_AT_HEAD

    assert load_policy("the repository", read=reader).decide("bot", "note").mode == "deny"
    assert seen == ["the repository"]
