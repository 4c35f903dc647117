"""The two corpora of the secret scanner, loaded for tests and the benchmark.

* credentials.json: credential formats in realistic placements. The file holds
  templates, not credentials: `expand` fills them with seeded fake values of the
  right shape, so no credential-shaped string is ever committed (a repository
  scanner would flag it, and a copied corpus could be mistaken for a leak).
* ledger_entries.json: realistic entries that hold none (false positives).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string

from kit.run import DATA

CORPORA = DATA / "secrets"

CHARSETS = {
    "U": string.ascii_uppercase + string.digits,
    "u": string.ascii_uppercase,
    "l": string.ascii_lowercase,
    "L": string.ascii_letters,
    "d": string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "a": string.ascii_letters + string.digits,
    "b": string.ascii_letters + string.digits + "+/",
    "w": string.ascii_letters + string.digits + "_-",
}
_SLOT = re.compile(r"\{\{(?:(?P<cs>[A-Za-z]):(?P<n>\d+)|=(?P<lit>[^}]*)|(?P<special>jwt))\}\}")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _jwt(rng: random.Random) -> str:
    header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = {
        "sub": str(rng.randrange(10**9)),
        "name": "".join(rng.choice(string.ascii_letters) for _ in range(8)),
        "iat": 1714560000 + rng.randrange(10**6),
    }
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = _b64url(bytes(rng.randrange(256) for _ in range(32)))
    return f"{header}.{payload}.{signature}"


def expand(template: str, seed: str) -> str:
    """The template with every slot filled (the same seed gives the same text)."""
    rng = random.Random(seed)

    def fill(m: re.Match) -> str:
        if m.group("lit") is not None:
            return m.group("lit")
        if m.group("special") == "jwt":
            return _jwt(rng)
        chars = CHARSETS[m.group("cs")]
        return "".join(rng.choice(chars) for _ in range(int(m.group("n"))))

    return _SLOT.sub(fill, template)


def credential_cases() -> list[tuple[str, str, str, str]]:
    """[(case id, format, field, text)] with fake credentials filled in."""
    doc = json.loads((CORPORA / "credentials.json").read_text(encoding="utf-8"))
    out: list[tuple[str, str, str, str]] = []
    for n, case in enumerate(doc["cases"]):
        case_id = f"{n:02d}-{case['format']}"
        out.append((case_id, case["format"], case["field"], expand(case["text"], case_id)))
    return out


def ledger_entries() -> list[dict[str, str]]:
    """[dict(kind, summary, body, source)]: realistic entries without any credential."""
    return json.loads((CORPORA / "ledger_entries.json").read_text(encoding="utf-8"))["entries"]
