"""Two bootstraps in force on a line (a clone bootstrapped before it pulled the project's
ledger, then the histories met) are a conflict: `doctor` flags it as `verify --lint` does, and
the context shows the latest as the What with the conflict first (docs/FORMAT.md, Identity)."""

from __future__ import annotations

import json

from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import Via, cli


def bootstrap(repo, summary: str, body: str) -> str:
    r = cli(repo, "log", "--kind", "bootstrap", "--summary", summary, "--body", body, "--json", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    return json.loads(r.out)["entry"]["id"]


def doctor_findings(repo) -> tuple:
    r = cli(repo, "doctor", "--json", via=Via.THIS_PROCESS)
    return r.code, [c for c in json.loads(r.out)["checks"] if c["name"] == "project history"]


def test_doctor_does_not_stay_silent_when_two_project_histories_met(repo):
    first = bootstrap(repo, "A shoe shop", "Sells shoes online.")
    assert doctor_findings(repo)[1] == [], "one bootstrap is the project's history, nothing to flag"
    second = bootstrap(repo, "A bakery", "Sells bread.")
    code, found = doctor_findings(repo)
    assert code == 1 and len(found) == 1 and found[0]["level"] == "problem", found
    assert "2 bootstraps are in force" in found[0]["detail"] and f"[{first[:8]}]" in found[0]["detail"]
    assert "git lifeline --line main revise" in found[0]["fix"], found
    lint = cli(repo, "verify", "--lint", via=Via.THIS_PROCESS)
    assert "two bootstraps" in lint.out + lint.err, lint
    # the context: the conflict first, then the latest by (ts, id) as the What, never a silent swap
    text = cli(repo, "context", via=Via.THIS_PROCESS).out
    assert text.index("**Conflict:** 2 bootstraps are in force") < text.index("A bakery"), text
    assert f"the latest, [{second[:8]}]" in text and f"also in force: [{first[:8]}]" in text, text
    assert f"**What:** A bakery `[{second[:8]}]`" in text, text
    # a human supersedes one: one history again, doctor is quiet
    r = cli(repo, "revert", first, "--body", "The bakery is the project.", via=Via.THIS_PROCESS)
    assert r.code == 0, r
    assert doctor_findings(repo)[1] == []
