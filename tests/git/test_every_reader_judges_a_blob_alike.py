"""One parse for every stored blob: the cache, verify, sync and the store cannot disagree
about what is malformed, an oversized blob is refused before any parser sees it, and no
Entry exists in memory that breaks a rule."""

from __future__ import annotations

import json

import pytest
from kit.entries import corpus, make_entry, path_of
from kit.home import AUTHOR
from kit.repos import open_ledger
from kit.tamper import add_commit

from git_lifeline.core.content_rules import MAX_BODY_BYTES, MAX_FIELD_CHARS, MAX_PARENTS, MAX_SUMMARY_CHARS
from git_lifeline.core.entry import (
    MAX_BLOB_BYTES,
    Entry,
    EntryError,
    compute_id,
    new_entry,
)
from git_lifeline.git.verify import verify_log


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Commit the whole corpus on one line; take the cache's verdict and verify's."""
    from kit.repos import init_repo

    repo = init_repo(tmp_path_factory.mktemp("alike") / "repo")
    led = open_ledger(repo)
    p1, p2 = make_entry(1), make_entry(2)
    led.append([p1, p2])
    base = json.loads(make_entry(3, parents=[p1.id, p2.id], dedup_key="k").to_json())
    cases = corpus(base)
    add_commit(repo, lambda files: {**files, **{path_of(i): data for i, data in cases.values()}})
    _good, broken = open_ledger(repo).cache().entries(open_ledger(repo).head())
    report = verify_log(open_ledger(repo).store)
    flagged = {}
    for p in report.problems:
        assert p.code == "bad-entry", p  # no other finding: the corpus's parents exist, it holds no secret
        path = p.message.split(":", 1)[0]
        flagged[path.removeprefix("entries/").replace("/", "")] = p.message
    return cases, set(broken), flagged


def test_the_cache_and_verify_agree_on_every_malformed_blob(judged):
    cases, broken, flagged = judged
    for name, (entry_id, _data) in cases.items():
        expected = not name.startswith("valid")
        assert (entry_id in broken) == expected, f"{name}: the cache {'missed' if expected else 'refused'} it"
        assert (entry_id in flagged) == expected, f"{name}: verify {'missed' if expected else 'flagged'} it"


def test_the_store_path_refuses_what_verify_flags(judged):
    # The store, sync and lines read blobs with Entry.from_json: the same verdict as verify.
    cases, _broken, flagged = judged
    for name, (entry_id, data) in cases.items():
        try:
            e = Entry.from_json(data)
        except EntryError:
            assert entry_id in flagged, name
            continue
        assert (not e.verify()) == (entry_id in flagged), name


def test_the_cache_refuses_a_blob_that_is_not_utf8_like_verify(ledger, repo):
    ledger.append([make_entry(4)])
    e = make_entry(5, body="Caf\ufffd reasons")  # what the cache's lossy decoding reads
    data = e.to_json().replace("\ufffd".encode(), b"\xe9")
    add_commit(repo, lambda files: {**files, path_of(e.id): data})
    _good, broken = open_ledger(repo).cache().entries(open_ledger(repo).head())
    assert any("not valid UTF-8" in p.message for p in verify_log(open_ledger(repo).store).problems)
    assert e.id in broken


# ---- size before parsing ---------------------------------------------------------------------
def test_an_oversized_blob_is_refused_before_it_is_parsed():
    # Each would fail later for another reason (nesting, UTF-8, JSON): the size is named first.
    for data in (b"[" * (MAX_BLOB_BYTES + 1), b"\xff" * (MAX_BLOB_BYTES + 1), b"{" + b" " * MAX_BLOB_BYTES):
        with pytest.raises(EntryError, match="larger than any entry can be"):
            Entry.from_json(data)
    with pytest.raises(EntryError, match="larger than any entry can be"):
        Entry.from_json("\u20ac" * (MAX_BLOB_BYTES // 3 + 1))  # text: its UTF-8 size counts


def test_the_largest_valid_entry_is_not_refused_by_the_size_limit():
    # Every field at its limit, each character at its costliest in JSON.
    parents = sorted(compute_id("note", str(i), "", "", "", "", "", []) for i in range(MAX_PARENTS))
    wide = "\U0001f600"
    e = new_entry(
        kind="requirement",
        summary=wide * MAX_SUMMARY_CHARS,
        author=wide * MAX_FIELD_CHARS,
        agent=wide * MAX_FIELD_CHARS,
        provider=wide * MAX_FIELD_CHARS,
        model=wide * MAX_FIELD_CHARS,
        body='"' * MAX_BODY_BYTES,
        parents=parents,
        dedup_key=wide * MAX_FIELD_CHARS,
    )
    data = e.to_json()
    assert len(data) <= MAX_BLOB_BYTES
    assert Entry.from_json(data) == e


# ---- no invalid Entry in memory ---------------------------------------------------------------
GOOD = dict(
    id="a" * 64,
    kind="note",
    author=AUTHOR,
    agent="human",
    provider="none",
    model="human",
    summary="Fine",
    body="Reasons.",
    parents=[],
    dedup_key=None,
)


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"kind": "gossip"}, "unknown kind"),
        ({"summary": "a\nb"}, "line break"),
        ({"body": " padded "}, "canonical form"),
        ({"parents": ["b" * 64, "a" * 64]}, "canonical form"),
        ({"parents": ("a" * 64,)}, "list of ids"),
        ({"id": "A" * 64}, "64 lowercase hex"),
        ({"author": None}, "author: must be text"),
    ],
)
def test_an_entry_that_breaks_a_rule_cannot_be_constructed(change, fragment):
    from datetime import datetime, timezone

    with pytest.raises(EntryError, match=fragment):
        Entry(**{**GOOD, **change}, ts=datetime(2024, 1, 1, tzinfo=timezone.utc))


def test_a_naive_or_local_ts_cannot_be_constructed():
    from datetime import datetime, timedelta, timezone

    with pytest.raises(EntryError, match="UTC offset"):
        Entry(**GOOD, ts=datetime(2024, 1, 1))
    with pytest.raises(EntryError, match="in UTC"):
        Entry(**GOOD, ts=datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=2))))


def test_a_lone_surrogate_is_named_not_crashed_on():
    # click hands undecodable argv bytes over as lone surrogates, which cannot be hashed
    with pytest.raises(EntryError, match="summary contains an unpaired surrogate"):
        new_entry(kind="note", summary="caf\udce9", author=AUTHOR, body="why")


def test_the_cache_catches_a_parse_failure_as_a_value_error():
    # views/cache.py treats ValueError as "a broken row": an EntryError must be one
    with pytest.raises(ValueError):
        Entry.from_json(b"not json\n")
