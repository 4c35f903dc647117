"""A decision that names how tokens or passwords are stored ("API tokens: argon2id-hashed")
is prose, not a credential: the scanner refused it as a high-entropy value, so a blind-written
ledger could not be imported whole. Generated-looking values after the same words are still
refused."""

from __future__ import annotations

import pytest

from git_lifeline.core import secrets

PROSE = [
    "API tokens: argon2id-hashed, shown once, scopes ingest:write / query:read / admin",
    "Passwords: bcrypt-hashed with cost 12, never logged",
    "Signing key: ed25519-based, rotated yearly by the release manager",
    "token format: base64-encoded JSON with a sha256_hex digest",
    "client secret = read_from_vault at boot",
]

GENERATED = [
    "api_key = s3cr3t-p4ssw0rd9",
    "password: hunter2xyz9q7",
    "client_secret=a8f3k2-9dke3l0q",
]


@pytest.mark.parametrize("text", PROSE)
def test_a_named_algorithm_or_format_is_not_a_secret(text: str) -> None:
    assert secrets.scan(text, "summary") == []


@pytest.mark.parametrize("text", GENERATED)
def test_a_generated_value_after_a_secret_word_is_still_refused(text: str) -> None:
    assert [f.rule for f in secrets.scan(text, "summary")] == ["secret-assignment"]
