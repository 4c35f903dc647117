"""An entry's text is anyone's input. In `git lifeline show` every body line is indented, as
`git log` indents a message, so a body line cannot pass for one of show's own fields (`status:`,
`revised by:`, `id:`); its hidden characters are shown visibly and --json keeps it exact. In
LIFELINE.md a body sits in its fence, so a fake footer inside it never decides whether the file
is current. (The context's lines are covered by test_context.py: entry text there is escaped
and kept within one line.)"""

from __future__ import annotations

import json

from kit.run import cli, git

FAKE_ID = "0123456789abcdef" * 4
FORGED = (
    f"The why.\nrevised by: {FAKE_ID[:12]} decision: Drop authentication\n"
    "status:   superseded\n"
    f"id:       {FAKE_ID}\n\n## Decisions in force\n<!-- lifeline:tree {'0' * 40} entries 1 -->"
)


def logged(repo, summary: str, body: str) -> str:
    r = cli(repo, "log", "--kind", "decision", "--summary", summary, "--body", body, "--json")
    assert r.code == 0, r
    return json.loads(r.out)["entry"]["id"]


def test_no_body_line_of_show_can_pass_for_one_of_its_fields(repo):
    entry = logged(repo, "Keep authentication", FORGED)
    r = cli(repo, "show", entry[:12])
    assert r.code == 0, r
    lines = r.out.split("\n")
    assert [line for line in lines if line.startswith("status:")] == ["status:   in force"], r.out
    assert not any(line.startswith(("revised by:", "id:       " + FAKE_ID, "## ", "<!--")) for line in lines), r.out
    body = lines[lines.index("") + 1 :]
    assert body[:2] == ["    The why.", f"    revised by: {FAKE_ID[:12]} decision: Drop authentication"], r.out
    assert all(line.startswith("    ") for line in body if line), r.out


def test_show_writes_a_bodys_hidden_characters_visibly_under_its_indent(repo):
    # ESC and the C1 controls never enter a body (refused on write and on every read); what may
    # is a lone carriage return, bidi and zero-width characters, a line separator
    entry = logged(repo, "Ship it", "ok\rNOT OK\u202egnp.exe\u200bend\u2028status:   superseded")
    r = cli(repo, "show", entry[:12])
    assert "    ok\\rNOT OK<U+202E>gnp.exe<U+200B>end<U+2028>status:   superseded" in r.out, r.out
    assert not any(ch in r.out for ch in ("\r", "\u202e", "\u200b", "\u2028")), r.out


def test_show_json_keeps_a_forged_body_exact(repo):
    entry = logged(repo, "Keep authentication", FORGED)
    doc = json.loads(cli(repo, "show", entry[:12], "--json").out)
    assert doc["body"] == FORGED and doc["superseded_by"] == [] and doc["status"] == "in force", doc


def test_a_fake_footer_in_a_body_never_decides_whether_lifeline_md_is_current(repo):
    logged(repo, "First", "plain")
    git(repo, "commit", "-q", "--allow-empty", "-m", "code")
    logged(repo, "Keep authentication", FORGED)  # its body names a tree of zeros, as a footer would
    logged(repo, "Third", "plain")
    written = (repo / "LIFELINE.md").read_bytes()
    assert b"Third" in written, "the refresh took the body's footer for the file's and stopped"
    status = json.loads(cli(repo, "status", "--json").out)
    assert status["lines"][0]["projection"]["state"] == "current", status["lines"][0]
    assert cli(repo, "render").code == 0
    assert (repo / "LIFELINE.md").read_bytes() == written, "the file kept up by refreshes differs from a full render"
