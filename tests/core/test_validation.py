"""Every invalid input is refused with a clear message and exit 2, and nothing is written:
the ref does not move, no new object becomes reachable, the projection is unchanged,
and no traceback reaches the user."""

from __future__ import annotations

import pytest
from kit.entries import find_prefix_collision, make_entry
from kit.repos import init_repo, open_ledger, snapshot
from kit.run import cli

from git_lifeline.core.entry import MAX_BODY_BYTES, MIN_PREFIX


@pytest.fixture(scope="module")
def table_repo(tmp_path_factory):
    """A ledger with a couple of entries and two ids that share a 6-hex prefix."""
    repo = init_repo(tmp_path_factory.mktemp("validation") / "repo")
    led = open_ledger(repo)
    first, second, prefix = find_prefix_collision()
    led.append(
        [
            make_entry(1, summary=first, body="why"),
            make_entry(2, summary=second, body="why"),
            make_entry(3, summary="Use git", body="It is already everywhere."),
        ]
    )
    files = tmp_path_factory.mktemp("inputs")
    (files / "big.txt").write_bytes(b"x" * (MAX_BODY_BYTES + 1))
    (files / "latin1.txt").write_bytes("caf\xe9 reason".encode("latin-1"))
    (files / "ok.txt").write_text("a fine reason")
    return {
        "repo": repo,
        "prefix": prefix,
        "files": files,
        "unknown": "0" * 6 if not prefix.startswith("0") else "f" * 6,
    }


def log_args(summary="A summary", body="A body", kind="decision", *extra):
    args = ["log", "--kind", kind, "--summary", summary]
    if body is not None:
        args += ["--body", body]
    return args + list(extra)


# (name, argv builder given the fixture, fragment the message must contain)
CASES = [
    ("empty-summary", lambda t: log_args(""), "summary is empty"),
    ("whitespace-summary", lambda t: log_args("   \t "), "summary is empty"),
    ("newline-summary", lambda t: log_args("first\nsecond"), "line break"),
    ("cr-summary", lambda t: log_args("first\rsecond"), "line break"),
    ("line-separator-summary", lambda t: log_args("first\u2028second"), "line break"),
    ("too-long-summary", lambda t: log_args("x" * 301), "longer than 300"),
    ("unknown-kind", lambda t: log_args(kind="decisoin"), "unknown kind 'decisoin'"),
    ("missing-body-for-decision", lambda t: log_args(body=None), "needs its why"),
    ("whitespace-body-for-decision", lambda t: log_args(body=" \n\t "), "needs its why"),
    (
        "body-too-large",
        lambda t: log_args(body=None) + ["--body-file", str(t["files"] / "big.txt")],
        f"larger than {MAX_BODY_BYTES} bytes",
    ),
    ("control-char-summary", lambda t: log_args("bell\x07here"), "control character U+0007"),
    ("control-char-body", lambda t: log_args(body="escape\x1b[31m"), "control character U+001B"),
    ("non-utf8-summary", lambda t: log_args(b"caf\xe9"), "not valid UTF-8"),
    ("non-utf8-body", lambda t: log_args(body=b"caf\xe9 why"), "not valid UTF-8"),
    ("non-utf8-author", lambda t: log_args() + ["--author", b"\xff\xfe"], "not valid UTF-8"),
    (
        "parent-prefix-too-short",
        lambda t: log_args() + ["--parents", t["prefix"][: MIN_PREFIX - 1]],
        f"at least {MIN_PREFIX} hex",
    ),
    ("parent-not-hex", lambda t: log_args() + ["--parents", "zzzzzzzz"], f"at least {MIN_PREFIX} hex"),
    ("unknown-parent", lambda t: log_args() + ["--parents", t["unknown"]], "no entry"),
    ("ambiguous-parent", lambda t: log_args() + ["--parents", t["prefix"]], "ambiguous id prefix"),
    ("line-dotdot", lambda t: ["--line", "../x"] + log_args(), "invalid line name"),
    ("line-space", lambda t: ["--line", "a b"] + log_args(), "invalid line name"),
    ("line-empty", lambda t: ["--line", ""] + log_args(), "invalid line name"),
    ("body-and-body-file", lambda t: log_args() + ["--body-file", str(t["files"] / "ok.txt")], "not both"),
    (
        "body-file-not-utf8",
        lambda t: log_args(body=None) + ["--body-file", str(t["files"] / "latin1.txt")],
        "not valid UTF-8",
    ),
    ("body-file-missing", lambda t: log_args(body=None) + ["--body-file", str(t["files"] / "nope.txt")], "nope.txt"),
    ("missing-kind-option", lambda t: ["log", "--summary", "s", "--body", "b"], "--kind"),
    ("list-unknown-kind", lambda t: ["list", "--kind", "decisoin"], "unknown kind 'decisoin'"),
    ("show-unknown-id", lambda t: ["show", t["unknown"]], "no entry"),
    ("context-negative-budget", lambda t: ["context", "--budget", "-1"], "budget"),
]


@pytest.mark.parametrize("name,argv,fragment", CASES, ids=[c[0] for c in CASES])
def test_invalid_input_is_refused_with_exit_2_and_writes_nothing(table_repo, name, argv, fragment, record_counts):
    repo = table_repo["repo"]
    before = snapshot(repo)
    res = cli(repo, *argv(table_repo))
    assert res.code == 2, res
    assert fragment in res.err, res
    assert "Traceback" not in res.err and "internal error" not in res.err, res
    assert res.out == "", res
    assert snapshot(repo) == before
    record_counts("bad-input-arguments", tried=1, held=1, lost=0)
