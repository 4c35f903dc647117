"""Everything printed for a human shows hidden characters visibly, so a human reads the text
an AI reads: a carriage return that rewrites a line, bidi overrides, zero-width characters,
escape sequences. JSON output, and the context piped to an AI, stay exact."""

from __future__ import annotations

import json

import pytest
from kit.repos import log_entry
from kit.run import cli
from kit.terminal import on_a_terminal

from git_lifeline.app.visible import visible

RLO, ZWSP, BOM = "\u202e", "\u200b", "\ufeff"
HOSTILE_SUMMARY = f"Approve{ZWSP} the {RLO}txt.exe{BOM} plan"
SHOWN_SUMMARY = "Approve<U+200B> the <U+202E>txt.exe<U+FEFF> plan"
HOSTILE_BODY = "Approved by legal.\rRejected by legal, do not ship."


@pytest.mark.parametrize(
    "text, shown",
    [
        ("a\rb", "a\\rb"),
        ("\x1b[2J", "<U+001B>[2J"),
        (f"x{RLO}y", "x<U+202E>y"),
        ("\u2028", "<U+2028>"),
        ("\u00ad", "<U+00AD>"),
        ("\U000e0041", "<U+E0041>"),
        ("\x7f", "<U+007F>"),
        ("\x85", "<U+0085>"),
        ("tab\there", "tab\\there"),
        ("plain ünïcødé 漢字 🚀 ❤️", "plain ünïcødé 漢字 🚀 ❤️"),
    ],
)
def test_hidden_and_controlling_characters_are_written_visibly(text, shown):
    assert visible(text) == shown


def test_line_breaks_and_tabs_stay_in_multiline_text_and_crlf_is_one_break():
    assert visible("a\r\nb\tc\rd", multiline=True) == "a\nb\tc\\rd"


@pytest.fixture
def hostile(repo):
    res = log_entry(
        repo, "decision", HOSTILE_SUMMARY, HOSTILE_BODY, "--subject", f"data{ZWSP}base", "--json", expect=None
    )
    assert res.code == 0, res
    entry = json.loads(res.out)["entry"]
    assert (
        cli(repo, "log", "--kind", "decision", "--summary", "Other", "--body", "b", "--subject", f"data{ZWSP}base").code
        == 0
    )
    return repo, entry


def test_show_prints_a_carriage_return_visibly_instead_of_rewriting_the_line(hostile):
    # a human used to see only "Rejected by legal, do not ship." where the AI reads both
    repo, e = hostile
    out = cli(repo, "show", e["id"][:8]).out
    assert "\r" not in out and RLO not in out and ZWSP not in out
    assert "Approved by legal.\\rRejected by legal, do not ship." in out
    assert f"summary:  {SHOWN_SUMMARY}" in out
    shown_json = json.loads(cli(repo, "show", e["id"][:8], "--json").out)
    assert shown_json["body"] == f"subject: data{ZWSP}base\n\n{HOSTILE_BODY}"  # exact
    assert shown_json["summary"] == HOSTILE_SUMMARY


@pytest.mark.parametrize(
    "argv", [["list"], ["list", "--oneline"], ["list", "--format", "%s %b"], ["recall", "approve plan"], ["conflicts"]]
)
def test_listings_show_bidi_and_zero_width_characters_visibly(hostile, argv):
    repo, _ = hostile
    res = cli(repo, *argv)
    assert res.code == 0, res
    assert SHOWN_SUMMARY in res.out, res
    assert not any(ch in res.out for ch in (RLO, ZWSP, BOM, "\r"))


def test_a_write_echoes_its_summary_visibly(repo):
    res = cli(repo, "log", "--kind", "note", "--summary", HOSTILE_SUMMARY, "--body", "b")
    assert f"note: {SHOWN_SUMMARY}" in res.out and RLO not in res.out


def test_resume_and_review_and_audit_show_hidden_characters_visibly(repo):
    assert cli(repo, "checkpoint", "--thread", "t", "--next", f"ship {RLO}fdp.exe").code == 0
    out = cli(repo, "resume").out
    assert "next: ship <U+202E>fdp.exe" in out and RLO not in out
    assert cli(repo, "propose", "--kind", "note", "--summary", HOSTILE_SUMMARY, "--body", HOSTILE_BODY).code == 0
    review = cli(repo, "review").out
    assert SHOWN_SUMMARY in review and RLO not in review and "\r" not in review
    res = cli(repo, "reject", "all", "--why", "no\x1b[2J\x1b[Hall clear")
    assert res.code == 0, res
    audit = cli(repo, "audit")
    # an escape sequence from a review record used to clear the reader's screen
    assert "\x1b" not in audit.out and "no<U+001B>[2J<U+001B>[Hall clear" in audit.out
    assert "\x1b[2J" in json.loads(cli(repo, "audit", "--json").out)[0]["why"]  # exact


def test_the_context_is_exact_for_an_ai_and_visible_on_a_terminal(hostile):
    repo, _ = hostile
    piped = cli(repo, "context").out
    assert HOSTILE_SUMMARY in piped
    code, shown = on_a_terminal(repo, "--no-pager", "context", env={})
    assert code == 0 and SHOWN_SUMMARY in shown and RLO not in shown


def test_errors_show_hidden_characters_visibly(repo):
    res = cli(repo, "list", "--since", f"yester{RLO}day")
    assert res.code == 2 and RLO not in res.err and "yester\\u202eday" in res.err


HIDDEN = f"x{RLO}y\u009b31m"  # a branch name: a bidi override and a C1 CSI, both valid in a ref name
HIDDEN_SHOWN = "x<U+202E>y<U+009B>31m"


def test_policy_and_status_show_the_remotes_default_branch_name_visibly(repo):
    """The policy is read from origin's default branch, which the remote names
    (refs/remotes/origin/HEAD): `policy` and `status` printed that name raw."""
    from kit.repos import commit_file
    from kit.run import git

    commit_file(repo)
    git(repo, "remote", "add", "origin", str(repo.parent / "elsewhere.git"))
    git(repo, "update-ref", f"refs/remotes/origin/{HIDDEN}", "HEAD")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{HIDDEN}")
    for argv in (["policy"], ["status", "--quick"]):
        res = cli(repo, *argv)
        assert res.code == 0, res
        assert RLO not in res.out + res.err and "\u009b" not in res.out + res.err, (argv, res)
        assert HIDDEN_SHOWN in res.out, (argv, res)
    raw = cli(repo, "policy", "--json").out
    assert RLO not in raw and "\u009b" not in raw, raw  # escaped in the JSON text...
    assert json.loads(raw)["ref"] == f"refs/remotes/origin/{HIDDEN}"  # ...and exact as data


def test_the_mcp_program_shows_hidden_characters_of_its_errors_visibly(tmp_path):
    """`python -m git_lifeline.mcp` (what `git lifeline mcp` hands over to) printed its
    errors raw: a repository path's escape sequence drove the terminal."""
    import subprocess
    import sys

    from kit.run import subprocess_env

    where = tmp_path / f"x\x1b]0;owned\x07{RLO}y"
    where.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "git_lifeline.mcp", "--repo", str(where), "--check"],
        capture_output=True,
        env=subprocess_env(),
        cwd=str(tmp_path),
        timeout=120,
    )
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and err.startswith("git-lifeline: "), err
    assert "\x1b" not in err and "\x07" not in err and RLO not in err, err
    assert "x<U+001B>]0;owned\\a<U+202E>y" in err, err


def test_an_export_is_exact_in_a_file_or_a_pipe_and_visible_on_a_terminal(hostile, tmp_path):
    """`export` to standard output printed the summaries raw on a terminal (a bidi
    override reordered what a human read); piped or written to a file it is data."""
    repo, _ = hostile
    assert HOSTILE_SUMMARY in cli(repo, "export").out
    out = tmp_path / "exported.md"
    assert cli(repo, "export", "-o", str(out)).code == 0 and HOSTILE_SUMMARY in out.read_text()
    code, shown = on_a_terminal(repo, "--no-pager", "export", env={})
    assert code == 0 and SHOWN_SUMMARY in shown and RLO not in shown and ZWSP not in shown, shown


def test_json_output_stays_valid_utf8_json_when_a_ref_name_the_remote_chose_is_not_utf8(repo):
    """origin's default branch may be named with bytes that are not UTF-8; `policy --json`
    (and status, doctor) wrote them raw, so the output was not UTF-8 and no strict JSON
    reader took it. Such a character is written as its JSON escape: the exact name back."""

    from kit.repos import commit_file
    from kit.run import git

    commit_file(repo)
    git(repo, "remote", "add", "origin", str(repo.parent / "elsewhere.git"))
    git(repo, "update-ref", b"refs/remotes/origin/br\xff\x9b", "HEAD")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", b"refs/remotes/origin/br\xff\x9b")
    for argv in (["policy", "--json"], ["status", "--quick", "--json"], ["doctor", "--json"]):
        res = cli(repo, *argv)
        assert res.code in (0, 1), (argv, res)
        text = res.raw.decode("utf-8")  # raises when the output is not UTF-8
        data = json.loads(text)
        assert data is not None
    assert json.loads(cli(repo, "policy", "--json").out)["ref"] == "refs/remotes/origin/br\udcff\udc9b"
