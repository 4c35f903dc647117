"""Bearer tokens for a small team: `git lifeline mcp token add|list|revoke`, and what the
HTTP server checks a request's token against.

The file holds one line per token, `NAME sha256:<hex>`: only the hash of a token is kept,
so whoever reads the file (a backup, a shared git dir) cannot present one. A token is 32
random bytes (`secrets`), shown once when it is made. The NAME is who writes: it becomes the
agent name of every write made with the token, and the write policy is keyed on it.

The default file is `lifeline-mcp-tokens` in the repository's git dir: outside the work tree
(never committed), shared by its linked worktrees. The server re-reads the file when its
mtime, size or inode changes, so a revoked token stops working at the next request.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import InputError
from ..git.fs import file_lock, read_bounded, write_atomic

DEFAULT_FILE = "lifeline-mcp-tokens"
TOKEN_PREFIX = "llt_"  # tells a lifeline token from a JWT (three dot-separated parts) at a glance
MAX_FILE_BYTES = 1 << 20  # a team's tokens; a larger file is not ours
MAX_TOKEN_CHARS = 4096  # what a presented token may be before it is even hashed
# An agent name as the policy names agents: a letter or digit first, no spaces, no colon.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
RESERVED = ("human",)  # kept for people writing without an agent name (app/agents.py)


@dataclass(frozen=True)
class TokenLine:
    name: str
    digest: str  # "sha256:<hex>"


@dataclass(frozen=True)
class NewToken:
    name: str
    token: str  # shown once, never stored
    path: Path


def default_path(git_dir: Path) -> Path:
    return git_dir / DEFAULT_FILE


def digest_of(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise InputError(
            f"token name {name!r} is not an agent name: 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if name.lower() in RESERVED:
        raise InputError(f"token name {name!r} is reserved for people writing without an agent name")
    return name


def parse_lines(text: str, source: str) -> list[TokenLine]:
    """The file's tokens; a line that is not `NAME sha256:<64 hex>` is refused with its number
    (a hand-edited file with a typo must not silently drop or keep a token)."""
    out: list[TokenLine] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not NAME_RE.match(parts[0]) or not re.fullmatch(r"sha256:[0-9a-f]{64}", parts[1]):
            raise InputError(f"{source}:{number}: not a token line (expected 'NAME sha256:<64 hex digits>')")
        out.append(TokenLine(parts[0], parts[1]))
    return out


def read_tokens(path: Path) -> list[TokenLine]:
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path.name}: the token file is not UTF-8 text") from None
    return parse_lines(text, path.name)


def _write(path: Path, tokens: list[TokenLine]) -> None:
    if not path.exists():
        # Created private to its owner: write_atomic keeps the mode of the file it replaces.
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    write_atomic(path, "".join(f"{t.name} {t.digest}\n" for t in tokens))


def _lock(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def add_token(path: Path, name: str) -> NewToken:
    """A new random token for NAME; refused when NAME already has one (revoke it first)."""
    check_name(name)
    with file_lock(_lock(path)):
        tokens = read_tokens(path)
        if any(t.name == name for t in tokens):
            raise InputError(f"a token named {name!r} exists already; revoke it first (git lifeline mcp token revoke)")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        _write(path, [*tokens, TokenLine(name, digest_of(token))])
    return NewToken(name, token, path)


def revoke_token(path: Path, name: str) -> None:
    with file_lock(_lock(path)):
        tokens = read_tokens(path)
        kept = [t for t in tokens if t.name != name]
        if len(kept) == len(tokens):
            raise InputError(f"no token named {name!r} in {path.name}")
        _write(path, kept)


class TokenFile:
    """The server's view of a token file: re-read when it changes, a token looked up by hash
    in constant time per line."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: Optional[tuple[int, int, int]] = None
        self._tokens: list[TokenLine] = []
        self._load()

    def _load(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._stamp, self._tokens = None, []
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self._stamp:
            self._tokens = read_tokens(self.path)
            self._stamp = stamp

    def name_for(self, token: str) -> Optional[str]:
        """The NAME of a valid token, or None. A file that cannot be read (a bad edit) lets
        nobody in until it is fixed: failing open would keep a revoked token working."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            self._load()
        except (InputError, OSError):
            self._stamp, self._tokens = None, []
        presented = digest_of(token)
        found = None
        for t in self._tokens:
            if hmac.compare_digest(t.digest, presented):
                found = t.name
        return found


def read_jwks(path: Path, limit: int) -> str:
    """A JWKS file's text (the OAuth mode's keys, `--jwks FILE`), bounded and UTF-8."""
    try:
        return read_bounded(path, limit).decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"--jwks: no such file: {path.name}") from None
    except UnicodeDecodeError:
        raise InputError(f"--jwks: {path.name} is not UTF-8 text") from None
