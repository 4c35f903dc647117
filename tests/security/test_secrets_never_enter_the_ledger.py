"""Secrets never enter the ledger: every credential format of the corpus is found, at most
1% of realistic entries are flagged, and every write path refuses a credential with its
kind and position (never the secret), exit 2, and no object in the object database.

Corpora (docs/RELIABILITY.md quotes their counts): tests/data/secrets/credentials.json
(templates filled with fake credentials of the right shapes by tests/kit/secrets.py)
and tests/data/secrets/ledger_entries.json (realistic entries that hold none).
"""

from __future__ import annotations

import pytest
from kit.entries import make_entry, path_of, stored_entry
from kit.repos import files_hold, init_repo, log_entry, odb_holds, odb_objects, open_ledger, snapshot
from kit.run import cli
from kit.secrets import CORPORA, credential_cases, expand, ledger_entries
from kit.tamper import add_commit

from git_lifeline.app.agents import Agents
from git_lifeline.app.draft import CheckpointDraft, Draft, Writer
from git_lifeline.core import secrets
from git_lifeline.errors import SecretError
from git_lifeline.git.verify import verify_log
from git_lifeline.views import projection

CASES = credential_cases()
ENTRIES = ledger_entries()
MIN_FORMATS = 15
MIN_ENTRIES = 200
MAX_FALSE_POSITIVE_RATE = 0.01


def span_of(text: str, f: secrets.Finding) -> str:
    """The text a finding points at (its line and column, in characters)."""
    line = text.split("\n")[f.line - 1]
    return line[f.column - 1 : f.column - 1 + f.length]


# ---- the detector, on the corpora -------------------------------------------------------
def test_the_corpora_are_as_large_as_promised(record_counts):
    formats = {fmt for _cid, fmt, _field, _text in CASES}
    assert len(formats) >= MIN_FORMATS
    assert len(ENTRIES) >= MIN_ENTRIES
    found = [cid for cid, _fmt, field, text in CASES if secrets.scan(text, field)]
    flagged = [e for e in ENTRIES if secrets.scan(e["summary"], "summary") or secrets.scan(e["body"], "body")]
    record_counts(
        "secret-detection", tried=len(CASES), held=len(found), lost=len(CASES) - len(found), formats=len(formats)
    )
    record_counts("secret-false-positives", tried=len(ENTRIES), held=len(ENTRIES) - len(flagged), lost=len(flagged))


@pytest.mark.parametrize("case_id,fmt,field,text", CASES, ids=[c[0] for c in CASES])
def test_every_credential_format_is_found_and_never_echoed(case_id, fmt, field, text):
    findings = secrets.scan(text, field)
    assert findings, f"{case_id}: not detected"
    message = str(secrets.refusal(findings))
    for f in findings:
        secret = span_of(text, f)
        assert len(secret) == f.length
        assert secret not in message and secret[-8:] not in message, message
        assert f.field in message and f"column {f.column}" in message and f.kind in message


def test_at_most_one_percent_of_realistic_ledger_entries_are_flagged():
    flagged = [
        (
            e["source"],
            e["summary"],
            [f.rule for f in secrets.scan(e["summary"], "summary") + secrets.scan(e["body"], "body")],
        )
        for e in ENTRIES
    ]
    flagged = [f for f in flagged if f[2]]
    assert len(flagged) <= MAX_FALSE_POSITIVE_RATE * len(ENTRIES), flagged


def test_the_literal_prefilter_misses_no_needle_of_any_rule():
    # The one-regex test that skips most text must say "a needle is here" wherever one is:
    # at the start, the end, inside prose, next to another needle, in any case for the folded rules.
    for i, rule in enumerate(secrets.RULES):
        for needle in rule.needles:
            for text in (needle, f"plain words {needle}", f"{needle} plain words", f"ab{needle}cd\nmore"):
                variants = [text, text.upper(), text.title()] if rule.fold else [text]
                for variant in variants:
                    assert i in secrets._candidates(variant, variant.lower()), (rule.name, variant)
    for text in ("", "plain prose with no literal", "The decision: keep the cache warm."):
        assert secrets._candidates(text, text.lower()) == {
            i
            for needle, rules in secrets._CASED_NEEDLES + secrets._FOLDED_NEEDLES
            if needle in (text.lower() if any(secrets.RULES[r].fold for r in rules) else text)
            for i in rules
        }


def test_the_corpus_templates_are_deterministic_and_hold_no_literal_credential():
    raw = (secrets_dir := CORPORA / "credentials.json").read_text(encoding="utf-8")
    assert secrets.scan(raw) == [], f"{secrets_dir} must hold templates, not credentials"
    assert expand("x {{a:12}} y", "seed") == expand("x {{a:12}} y", "seed")


# ---- every write path refuses, with nothing written ---------------------------------------
TOKEN = expand("ghp_{{a:36}}", "write-path-token")
KEY_BLOCK = expand(
    "-----BEGIN OPENSSH {{=PRIVATE KEY}}-----\n{{b:70}}\n{{b:70}}\n-----END OPENSSH {{=PRIVATE KEY}}-----",
    "write-path-key",
)
DB_URL = expand("postgres://app:{{a:16}}@db.internal:5432/app", "write-path-url")
SECRETS = {
    "github-token": (TOKEN, TOKEN),
    "private-key": (KEY_BLOCK, "-----BEGIN OPENSSH"),
    "url-password": (DB_URL, DB_URL.split(":")[2].split("@")[0]),
}


def _migrate_source(tmp, secret):
    """A LIFELINE.md whose one entry carries the secret (as a hand-edited file would)."""
    e = stored_entry(kind="decision", summary="Database access", body=f"Use this:\n{secret}")
    path = tmp / "incoming.md"
    path.write_text(projection.render("main", [e], None), encoding="utf-8")
    return ["migrate", "--from", str(path)]


def _import_source(tmp, secret):
    """A lifeline-context markdown ledger (as the seed tool writes it) with the secret in a body."""
    from git_lifeline.core import seed as interop

    e = stored_entry(kind="decision", summary="Service account", body=f"Credentials:\n{secret}")
    path = tmp / "seed.md"
    path.write_text(interop.render_seed_markdown([e], "main"), encoding="utf-8")
    return ["import", "--from", str(path)]


def _body_file(tmp, secret):
    path = tmp / "body.txt"
    path.write_text(f"Context for the decision.\n\n{secret}\n", encoding="utf-8")
    return ["log", "--kind", "decision", "--summary", "Deploy access", "--body-file", str(path)]


# (name, argv builder given (tmp dir, secret), the field the finding must name)
WRITE_PATHS = [
    (
        "log-summary",
        lambda t, s: ["log", "--kind", "note", "--summary", f"Key {s.splitlines()[0]}", "--body", "b"],
        "summary",
    ),
    ("log-body", lambda t, s: ["log", "--kind", "decision", "--summary", "Deploy", "--body", f"Use\n{s}"], "body"),
    ("log-body-file", _body_file, "body"),
    (
        "log-thread",
        lambda t, s: ["log", "--kind", "note", "--summary", "In a thread", "--thread", "auth", "--body", s],
        "body",
    ),
    (
        "log-dedup-key",
        lambda t, s: ["log", "--kind", "note", "--summary", "Keyed", "--body", "b", "--dedup-key", s.splitlines()[0]],
        "dedup_key",
    ),
    (
        "checkpoint",
        lambda t, s: ["checkpoint", "--thread", "auth", "--next", f"retry with {s.splitlines()[0]}"],
        "body",
    ),
    ("migrate", _migrate_source, "body"),
    ("import", _import_source, "body"),
]


@pytest.fixture(scope="module")
def write_repo(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("secret-writes") / "repo")
    open_ledger(repo).append([make_entry(1), make_entry(2, kind="open", summary="Auth thread")])
    return repo


# each path once through the real CLI, the credential kinds taken in turn (the model gate is
# shared, so a path that refuses one kind refuses every kind the scan finds)
CLI_CASES = [(name, argv, field, list(SECRETS)[n % len(SECRETS)]) for n, (name, argv, field) in enumerate(WRITE_PATHS)]


@pytest.mark.parametrize("path_name,argv,field,secret_name", CLI_CASES, ids=[f"{c[0]}-{c[3]}" for c in CLI_CASES])
def test_every_write_path_refuses_a_credential_and_writes_nothing(
    write_repo, tmp_path, path_name, argv, field, secret_name, record_counts
):
    secret, needle = SECRETS[secret_name]
    if path_name in ("log-summary", "log-dedup-key", "checkpoint") and "\n" in secret:
        secret = secret.splitlines()[0]  # single-line fields get the block's first line (still a finding)
    before, objects = snapshot(write_repo), odb_objects(write_repo)
    res = cli(write_repo, *argv(tmp_path, secret))
    assert res.code == 2, res
    assert "looks like" in res.err and f"{field}" in res.err and "column" in res.err, res
    # a file brought in is scanned whatever its header says: no override to teach
    assert ("--allow-secret" in res.err) == (path_name not in ("import", "migrate")), res
    assert needle not in res.err and needle not in res.out, "the secret was echoed"
    assert snapshot(write_repo) == before
    assert odb_objects(write_repo) == objects, "an object was written"
    assert not odb_holds(write_repo, needle.encode())
    assert files_hold(write_repo / ".git", needle.encode()) == []
    record_counts("secret-write-paths", tried=1, held=1, lost=0)


def test_the_in_process_api_refuses_before_building_an_entry(ledger, repo, record_counts):
    objects = odb_objects(repo)
    with pytest.raises(SecretError) as info:
        ledger.log(Draft(kind="decision", summary="Token", body=f"ci uses {TOKEN}"))
    assert "GitHub token" in str(info.value) and TOKEN not in str(info.value)
    with pytest.raises(SecretError):
        make_entry(3, body=DB_URL)
    assert odb_objects(repo) == objects
    record_counts("secret-write-paths", tried=2, held=2, lost=0)  # Ledger.log, new_entry


# ---- the override ----------------------------------------------------------------------------
def test_allow_secret_writes_and_records_the_reason_in_the_entry(repo):
    fake = "sk_live_" + "0" * 10 + "abcdefghij1234"  # a documented test value, flagged by shape
    res = log_entry(
        repo,
        "note",
        "Stripe docs example",
        f"The docs use {fake}.",
        "--allow-secret",
        "Stripe's published example value, not a key",
        expect=None,
    )
    assert res.code == 0, res
    [e] = open_ledger(repo).entries()
    assert e.body.startswith("allow-secret: Stripe's published example value, not a key\n")
    assert secrets.allowed(e.body) == "Stripe's published example value, not a key"
    assert cli(repo, "verify").code == 0


@pytest.mark.parametrize("reason", ["", "   ", "two\nlines", "x" * (secrets.MAX_REASON_CHARS + 1)])
def test_allow_secret_needs_a_one_line_reason(repo, reason):
    before = snapshot(repo)
    res = cli(repo, "log", "--kind", "note", "--summary", "s", "--body", TOKEN, "--allow-secret", reason)
    assert res.code == 2 and "--allow-secret needs a reason" in res.err, res
    assert snapshot(repo) == before


def test_allow_secret_is_honoured_by_checkpoints_and_threads(ledger, repo):
    res = cli(repo, "checkpoint", "--thread", "auth", "--next", f"rotate {TOKEN}", "--allow-secret", "revoked already")
    assert res.code == 0, res
    res = cli(
        repo,
        "log",
        "--kind",
        "note",
        "--summary",
        "thread note",
        "--thread",
        "auth",
        "--body",
        TOKEN,
        "--allow-secret",
        "revoked already",
    )
    assert res.code == 0, res
    assert verify_log(open_ledger(repo).store).ok


# ---- what slipped in anyway is reported ---------------------------------------------------------
def test_verify_reports_a_credential_that_slipped_into_history_without_echoing_it(ledger, repo):
    ledger.append([make_entry(1)])
    leaked = stored_entry(summary="Old note", body=f"token {TOKEN}")
    add_commit(repo, lambda files: {**files, path_of(leaked.id): leaked.to_json()})
    res = cli(repo, "verify")
    assert res.code == 1, res
    assert "  secret: " in res.out and "GitHub token" in res.out and leaked.id[:8] in res.out, res
    assert TOKEN not in res.out + res.err


# ---- the agent's door, the review trail and pulls --------------------------------------------
def test_agent_writes_and_checkpoints_as_over_mcp_are_refused(ledger, repo, record_counts):
    ledger.append([make_entry(1)])
    before, objects = snapshot(repo), odb_objects(repo)
    with pytest.raises(SecretError) as info:
        Agents(ledger).write(Draft("note", "Found the deploy key", f"it is {TOKEN}", agent="coder"), via="mcp")
    assert TOKEN not in str(info.value)
    with pytest.raises(SecretError):
        Agents(ledger).checkpoint(
            CheckpointDraft("auth", {"next": [f"use {DB_URL}"]}, None, Writer(agent="coder")), via="mcp"
        )
    assert snapshot(repo) == before and odb_objects(repo) == objects
    record_counts("secret-write-paths", tried=2, held=2, lost=0)  # MCP append, MCP checkpoint


def test_a_proposal_or_a_rejection_holding_a_credential_is_refused(ledger, repo, record_counts):
    ledger.append([make_entry(1)])
    before = snapshot(repo)
    res = cli(repo, "propose", "--kind", "decision", "--summary", "Use the shared key", "--body", KEY_BLOCK)
    assert res.code == 2 and "private key block" in res.err and "-----BEGIN" not in res.err, res
    assert snapshot(repo) == before
    res = cli(repo, "propose", "--kind", "decision", "--summary", "Rotate keys monthly", "--body", "least privilege")
    assert res.code == 0, res
    pid = res.out.split()[1]
    before = snapshot(repo)
    res = cli(repo, "reject", pid, "--why", f"we already have {TOKEN}")
    assert res.code == 2 and "GitHub token" in res.err and TOKEN not in res.err + res.out, res
    assert snapshot(repo) == before
    assert not odb_holds(repo, TOKEN.encode())
    record_counts("secret-write-paths", tried=2, held=2, lost=0)  # propose, reject --why


def test_a_pull_refuses_a_remote_line_that_carries_a_credential(tmp_path, record_counts):
    from kit.repos import remote_and_clones
    from kit.run import git

    remote, a, b = remote_and_clones(tmp_path)
    leaked = stored_entry(summary="Old deploy notes", body=f"use {TOKEN}")
    add_commit(b, lambda files: {**files, path_of(leaked.id): leaked.to_json()})  # a client without the gate
    git(b, "push", "-q", "origin", "refs/lifeline/main")
    head, projection_before = open_ledger(a).head(), (a / "LIFELINE.md").read_bytes()
    res = cli(a, "pull")
    assert res.code == 1 and "secret" in res.err and "GitHub token" in res.err, res
    assert TOKEN not in res.err + res.out
    assert open_ledger(a).head() == head, "the local line moved"
    assert leaked.id not in {e.id for e in open_ledger(a).entries()}
    assert (a / "LIFELINE.md").read_bytes() == projection_before
    record_counts("secret-write-paths", tried=1, held=1, lost=0)  # merge of a pull
