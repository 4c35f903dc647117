"""Credentials in an entry: found before anything is written, reported without echoing them.

A ledger is pushed to shared remotes and kept forever, append-only: a credential that
slips into an entry is leaked for good. Every new entry is scanned (the one builder,
`Entry.new`, calls `refuse_credentials`, so no write path can skip it), and `verify` scans what
arrives from elsewhere with the same function.

Model level: plain Python and `re`, no git. Each rule is a credential *shape* — a
provider's documented prefix and length, a private key block, a JWT, a URL with a
password, or a secret-sounding name assigned a high-entropy value. The rules and
their thresholds were chosen by measurement on two committed corpora (see
docs/RELIABILITY.md): every credential format must be found, and at most 1% of
realistic ledger entries may be flagged.

A finding names the kind of credential and where it is (field, line, column,
length) and never the matched text: error messages end up in terminals, CI logs
and agents' transcripts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Protocol

from ..errors import InputError, SecretError

# The body header that records a deliberate override (docs/FORMAT.md §8). It is part
# of the hashed body, so the override and its reason travel with the entry forever.
ALLOW_HEADER = "allow-secret"


@dataclass(frozen=True)
class Finding:
    kind: str  # what it looks like, e.g. "GitHub token"
    rule: str  # the rule's stable name, e.g. "github-token"
    field: str  # which field of the entry: summary, body, ...
    line: int  # 1-based
    column: int  # 1-based, in characters
    length: int  # characters matched

    def where(self) -> str:
        if self.field == "body" or self.line > 1:
            return f"{self.field} line {self.line}, column {self.column}"
        return f"{self.field} column {self.column}"

    def describe(self) -> str:
        return f"{self.where()}: looks like {_article(self.kind)} {self.kind} ({self.length} characters)"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    needles: tuple[str, ...]  # literal strings, one of which a match must contain ("" entries mean: always run)
    pattern: _Lazy
    group: int = 0  # the group that is the secret itself (its span is what is reported)
    accept: Optional[Callable[[str], bool]] = None  # further test on that group (default: not a placeholder)
    fold: bool = False  # case-insensitive: needles and pattern are lower case, matched on the lower-cased text
    bounded: bool = True  # a match must not continue a word (checked here: a leading look-behind is ~10x slower)
    _pattern_ci: _Lazy = field(init=False, repr=False, compare=False)  # set by __post_init__

    def __post_init__(self) -> None:
        # Matching lower-cased text is ~6x faster than re.IGNORECASE; the twin is for the
        # rare text whose lower-casing changes its length (then spans would not line up).
        object.__setattr__(
            self,
            "_pattern_ci",
            _Lazy(self.pattern.pattern, self.pattern.flags | re.IGNORECASE) if self.fold else self.pattern,
        )


# ---- value tests ----------------------------------------------------------------------
def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# Text that documents a shape rather than holding a credential: AWS's own example key,
# "xxxx", "<token>", "${VAR}", "{{ secrets.X }}", "****", "...".
_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|redacted|changeme|change_me|your[_-]|dummy|sample|x{4,}|\*{3,}|\.{3}|…"
    r"|[<>]|\$\{|\{\{|%\(|^\$[A-Za-z_]|^(?:password|passwd|secret|token|pass|pwd|none|null|true|false)$"
)


def _not_placeholder(value: str) -> bool:
    return _PLACEHOLDER.search(value) is None and len(set(value)) > 3


def _high_entropy(min_bits: float) -> Callable[[str], bool]:
    def accept(value: str) -> bool:
        return _not_placeholder(value) and entropy(value) >= min_bits

    return accept


_HAS_DIGIT = re.compile(r"\d")
_HAS_LETTER = re.compile(r"[A-Za-z]")
# What follows a secret-sounding name but is code, not a value: a call, an attribute
# path, an environment lookup, a file path, a type.
_NOT_A_VALUE = re.compile(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)+[A-Za-z_][A-Za-z0-9_]*$"  # attribute path: settings.api_key
    r"|^(?:os|env|process|settings|config|secrets|vault|ssm|ENV)\b"  # a lookup: os.environ[...], env(...)
    r"|^[~/.]"  # a file path
    r"|^[A-Z][A-Z_]*$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"  # an environment variable's name
    # words: read_from_vault, argon2id-hashed, sha256_hex (a word may carry one short run of
    # digits, as algorithm and format names do; a generated value has digits throughout)
    r"|^[a-z]+(?:[0-9]{1,3}[a-z]*)?(?:[_-][a-z]+(?:[0-9]{1,3}[a-z]*)?)+$"
    r"|\)$"
)  # a call: getpass()


def _assigned_secret(value: str) -> bool:
    """A value assigned to a secret-sounding name that looks generated, not written."""
    value = value.strip("'\"`")
    if len(value) < 10 or not _not_placeholder(value) or _NOT_A_VALUE.search(value):
        return False
    if not (_HAS_DIGIT.search(value) and _HAS_LETTER.search(value)):
        return False
    return entropy(value) >= 3.0


def _password_in_url(value: str) -> bool:
    return _not_placeholder(value) and not value.startswith(("$", "%", ":")) and len(value) >= 3


# ---- rules ---------------------------------------------------------------------------------
class _Lazy:
    """A rule's regex, compiled the first time a text holds one of the rule's needles.

    Compiling the ~50 rules took ~8 ms of every `git lifeline log`, whose entry (like
    most) holds no needle at all, so no rule's regex is ever run."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags
        self._compiled: Optional[re.Pattern] = None

    def finditer(self, text: str) -> Iterator[re.Match]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled.finditer(text)


def _r(pattern: str, flags: int = 0) -> _Lazy:
    return _Lazy(pattern, flags)


_E = r"(?![A-Za-z0-9_])"  # a token ends at a word boundary (its start is checked by `bounded`)
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

RULES: tuple[Rule, ...] = (
    # Private keys and signed tokens
    Rule(
        "private-key",
        "private key block",
        ("PRIVATE KEY",),
        _r(r"-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----"),
        bounded=False,
    ),
    Rule("jwt", "JSON Web Token", ("eyJ",), _r(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{0,}" + _E)),
    # Cloud providers
    Rule(
        "aws-access-key-id",
        "AWS access key id",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        _r(r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _E),
    ),
    Rule(
        "aws-secret-access-key",
        "AWS secret access key",
        ("aws",),
        _r(r"aws.{0,20}?secret.{0,20}?['\"]?\s*[:=]\s*['\"]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        group=1,
        accept=_high_entropy(3.5),
        fold=True,
        bounded=False,
    ),
    Rule("google-api-key", "Google API key", ("AIza",), _r(r"AIza[0-9A-Za-z_-]{35}" + _E)),
    Rule("google-oauth-secret", "Google OAuth client secret", ("GOCSPX-",), _r(r"GOCSPX-[A-Za-z0-9_-]{28}" + _E)),
    Rule(
        "gcp-service-account",
        "Google service account key",
        ("private_key_id",),
        _r(r"\"private_key_id\"\s*:\s*\"([0-9a-f]{40})\""),
        group=1,
        bounded=False,
    ),
    Rule(
        "azure-storage-key",
        "Azure storage account key",
        ("accountkey",),
        _r(r"accountkey\s*=\s*([A-Za-z0-9+/]{86}==)"),
        group=1,
        fold=True,
        bounded=False,
    ),
    Rule(
        "azure-sas",
        "Azure shared access signature",
        ("sig=",),
        _r(r"[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})"),
        group=1,
        accept=_high_entropy(3.5),
        bounded=False,
    ),
    Rule("digitalocean-token", "DigitalOcean token", ("_v1_",), _r(r"do[opr]_v1_[a-f0-9]{64}" + _E)),
    Rule(
        "hashicorp-vault-token",
        "HashiCorp Vault token",
        ("hvs.", "hvb."),
        _r(r"hv[sb]\.[A-Za-z0-9_-]{24,}" + _E),
        accept=_high_entropy(3.5),
    ),
    # Git hosts and package registries
    Rule(
        "github-token",
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        _r(r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    ),
    Rule(
        "github-fine-grained-token",
        "GitHub fine-grained token",
        ("github_pat_",),
        _r(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _E),
    ),
    Rule(
        "gitlab-token",
        "GitLab token",
        ("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-"),
        _r(r"(?:glpat|glptt|gldt|glrt|glcbt|glft|glimt|glagent|gloas)-[A-Za-z0-9_-]{20,}" + _E),
    ),
    Rule("bitbucket-token", "Bitbucket app password", ("ATBB",), _r(r"ATBB[A-Za-z0-9_=.-]{32,}" + _E)),
    Rule("atlassian-token", "Atlassian API token", ("ATATT3",), _r(r"ATATT3[A-Za-z0-9_=-]{100,}" + _E)),
    Rule("npm-token", "npm token", ("npm_",), _r(r"npm_[A-Za-z0-9]{36}" + _E)),
    Rule("pypi-token", "PyPI token", ("pypi-AgEIcHlwaS5vcmc",), _r(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    # Chat and app platforms
    Rule(
        "slack-token",
        "Slack token",
        ("xox",),
        _r(r"xox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,}" + _E),
        accept=_high_entropy(3.0),
    ),
    Rule(
        "slack-webhook",
        "Slack webhook URL",
        ("hooks.slack.com/",),
        _r(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}"),
        bounded=False,
    ),
    # a bot token starts with the base64 of the bot's numeric id: its first two characters
    # are one of these nine (ASCII digits 1-9 encoded)
    Rule(
        "discord-token",
        "Discord bot token",
        ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),
        _r(r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _E),
    ),
    Rule(
        "discord-webhook",
        "Discord webhook URL",
        ("/api/webhooks/",),
        _r(r"discord(?:app)?\.com/api/webhooks/\d{5,}/[A-Za-z0-9_-]{30,}"),
        bounded=False,
    ),
    Rule(
        "teams-webhook",
        "Microsoft Teams webhook URL",
        ("webhook.office.com",),
        _r(r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{30,}/IncomingWebhook/[A-Za-z0-9]{20,}"),
        bounded=False,
    ),
    Rule("telegram-bot-token", "Telegram bot token", (":AA",), _r(r"\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E)),
    Rule("twilio-key", "Twilio API key", ("SK",), _r(r"SK[0-9a-f]{32}" + _E)),
    Rule("sendgrid-key", "SendGrid API key", ("SG.",), _r(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E)),
    Rule("mailgun-key", "Mailgun API key", ("key-",), _r(r"key-[0-9a-f]{32}" + _E)),
    Rule("stripe-key", "Stripe secret key", ("_live_", "_test_"), _r(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + _E)),
    Rule("stripe-webhook-secret", "Stripe webhook secret", ("whsec_",), _r(r"whsec_[A-Za-z0-9]{32,}" + _E)),
    Rule(
        "shopify-token",
        "Shopify token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        _r(r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    ),
    Rule("linear-key", "Linear API key", ("lin_api_",), _r(r"lin_api_[A-Za-z0-9]{40}" + _E)),
    Rule(
        "notion-token", "Notion token", ("secret_", "ntn_"), _r(r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})" + _E)
    ),
    Rule("postman-key", "Postman API key", ("PMAK-",), _r(r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E)),
    # AI providers
    Rule("anthropic-key", "Anthropic API key", ("sk-ant-",), _r(r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{80,}")),
    Rule(
        "openai-key",
        "OpenAI API key",
        ("T3BlbkFJ",),
        _r(r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}" + _E),
    ),
    Rule(
        "openai-project-key",
        "OpenAI API key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-"),
        _r(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}" + _E),
        accept=_high_entropy(3.5),
    ),
    Rule("sk-key", "API key (sk-…)", ("sk-",), _r(r"sk-[A-Za-z0-9]{32,}" + _E), accept=_high_entropy(3.5)),
    Rule("huggingface-token", "Hugging Face token", ("hf_",), _r(r"hf_[A-Za-z]{34}" + _E)),
    Rule("groq-key", "Groq API key", ("gsk_",), _r(r"gsk_[A-Za-z0-9]{52}" + _E)),
    Rule("xai-key", "xAI API key", ("xai-",), _r(r"xai-[A-Za-z0-9]{80}" + _E)),
    Rule("perplexity-key", "Perplexity API key", ("pplx-",), _r(r"pplx-[A-Za-z0-9]{48}" + _E)),
    Rule("replicate-token", "Replicate API token", ("r8_",), _r(r"r8_[A-Za-z0-9]{37}" + _E)),
    # Passwords in connection strings and headers
    Rule(
        "url-password",
        "password in a connection string",
        ("://",),
        _r(r"\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@'\"`]{0,100}:([^\s@/'\"`]{1,200})@[A-Za-z0-9\[]"),
        group=1,
        accept=_password_in_url,
        fold=True,
        bounded=False,
    ),
    Rule(
        "conn-string-password",
        "password in a connection string",
        ("password", "pwd"),
        _r(r"(?:^|[;\s\"'])(?:password|pwd)\s*=\s*([^;\s'\"]{4,})\s*(?:;|$)", re.MULTILINE),
        group=1,
        accept=lambda v: _not_placeholder(v) and not v.startswith(("$", "%", "{")),
        fold=True,
        bounded=False,
    ),
    Rule(
        "authorization-header",
        "credential in an Authorization header",
        ("bearer", "basic", "token"),
        _r(r"\b(?:bearer|basic|token)\s+([A-Za-z0-9_\-.=+/~]{20,})"),
        group=1,
        accept=_high_entropy(3.5),
        fold=True,
        bounded=False,
    ),
    # A secret-sounding name assigned a generated-looking value (last: specific rules win)
    Rule(
        "secret-assignment",
        "high-entropy value assigned to a secret-sounding name",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _r(
            r"(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key"
            r"|client[_-]?secret|credentials?|signing[_-]?key|encryption[_-]?key)[a-z0-9_.-]{0,40}"
            r"['\"]?[ \t]{0,5}(?::=|=>|[:=])[ \t]{0,5}([^\s,;]{10,200})"
        ),
        group=1,
        accept=_assigned_secret,
        fold=True,
        bounded=False,
    ),
)


def _needle_index(fold: bool) -> tuple[tuple[str, list[int]], ...]:
    index: dict[str, list[int]] = {}
    for i, rule in enumerate(RULES):
        if rule.fold == fold:
            for needle in rule.needles:
                index.setdefault(needle, []).append(i)
    return tuple(index.items())


# needle -> the rules it may trigger
_CASED_NEEDLES = _needle_index(False)
_FOLDED_NEEDLES = _needle_index(True)

# Characters by how often prose holds them, most often first (a guess: it only decides speed).
_COMMON_CHARS = " etaoinsrhldcumfpgwybvk.,-\nTSAIMNOCBDPHWFRLEGj:xqz/"


def _any_needle(needles: Iterable[str]) -> re.Pattern:
    """One pattern that matches wherever any of `needles` occurs, and nowhere else.

    Most text holds no needle, and ~80 `in` tests cost ~15 us per entry (half of
    verifying one). An alternation of the needles as they are is no faster: nearly
    every letter of prose starts one. So each alternative starts at its needle's
    rarest character and looks behind for the rest of the needle before it
    (`K(?<=AK)IA` for `AKIA`): the regex engine skips, in C, every position that holds
    none of those characters. A match means exactly that the needle occurs."""

    def rank(ch: str) -> int:
        return _COMMON_CHARS.find(ch) if ch in _COMMON_CHARS else len(_COMMON_CHARS)

    # Alternatives that start at the same character share one branch: at a position that
    # holds it, the engine tries that branch's few needles, not every needle's first character.
    by_start: dict[str, list[str]] = {}
    for needle in sorted(set(needles)):
        k = max(range(len(needle)), key=lambda i: rank(needle[i]))
        behind = f"(?<={re.escape(needle[: k + 1])})" if k else ""
        by_start.setdefault(needle[k], []).append(behind + re.escape(needle[k + 1 :]))
    return re.compile("|".join(f"{re.escape(ch)}(?:{'|'.join(rests)})" for ch, rests in by_start.items()))


_ANY_CASED = _any_needle(needle for needle, _ in _CASED_NEEDLES)
_ANY_FOLDED = _any_needle(needle for needle, _ in _FOLDED_NEEDLES)


def _candidates(text: str, folded: str) -> set[int]:
    """The rules whose literals occur in the text (the only ones whose regex can match)."""
    if _ANY_CASED.search(text) is None and _ANY_FOLDED.search(folded) is None:
        return set()  # most text: no literal at all
    found = {i for needle, rules in _CASED_NEEDLES if needle in text for i in rules}
    found.update(i for needle, rules in _FOLDED_NEEDLES if needle in folded for i in rules)
    return found


def scan(text: str, field: str = "text", candidates: Optional[set[int]] = None) -> list[Finding]:
    """Every credential-shaped span in `text`, as findings (specific rules before generic).
    `candidates`, when given, are the rules to try (those whose literals occur somewhere)."""
    if not text:
        return []
    folded = text.lower()
    if candidates is None:
        candidates = _candidates(text, folded)
    else:  # few rules: test their literals in this text only
        candidates = {i for i in candidates if any(n in (folded if RULES[i].fold else text) for n in RULES[i].needles)}
    if not candidates:
        return []
    aligned = len(folded) == len(text)
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for i in sorted(candidates):  # rule order: specific rules claim a span before generic ones
        rule = RULES[i]
        if rule.fold:
            target, pattern = (folded, rule.pattern) if aligned else (text, rule._pattern_ci)
        else:
            target, pattern = text, rule.pattern
        for m in pattern.finditer(target):
            start, end = m.span(rule.group)
            if start < 0 or (rule.bounded and m.start() > 0 and text[m.start() - 1] in _WORD):
                continue
            if not (rule.accept or _not_placeholder)(text[start:end]):
                continue
            if any(start < t_end and t_start < end for t_start, t_end in taken):
                continue  # one finding per span: the most specific rule's
            taken.append((start, end))
            line = text.count("\n", 0, start) + 1
            column = start - (text.rfind("\n", 0, start) + 1) + 1
            found.append(Finding(rule.kind, rule.name, field, line, column, end - start))
    found.sort(key=lambda f: (f.line, f.column))
    return found


# Scanned fields, in the order they are reported. The id and ts are ours, parents are ids.
SCANNED_FIELDS = ("summary", "body", "author", "agent", "provider", "model", "dedup_key")


class Scanned(Protocol):
    """An entry (core/entry.py) as it is scanned: its SCANNED_FIELDS, read by name."""

    @property
    def body(self) -> str: ...


def allowed(body: str) -> Optional[str]:
    """The reason recorded by `--allow-secret`, when the body's header carries one."""
    if not body or ALLOW_HEADER not in body:
        return None  # the header's key is this literal text: without it, no header to parse
    from .blocks import field

    return field(body, ALLOW_HEADER)


HUMAN_AGENT = "human"  # the agent field of a person writing without an agent


def honoured_override(entry: Scanned) -> Optional[str]:
    """The reason of the override the scan honours: only on a human's own entry (agent
    "human"), where `--allow-secret` wrote it. On an agent's entry (a direct write or an
    approved proposal: the content is still the agent's) the header is text like any other."""
    if getattr(entry, "agent", None) != HUMAN_AGENT:
        return None
    return allowed(getattr(entry, "body", ""))


def entry_findings(entry: Scanned, honour_override: bool = True) -> list[Finding]:
    """Findings in an entry's text fields; empty when a human's override is honoured
    (`honour_override` False: an import, scanned whatever its header says)."""
    values = [
        (name, value) for name in SCANNED_FIELDS if isinstance(value := getattr(entry, name, None), str) and value
    ]
    # one pass of the literal tests over every field at once; most entries stop here (with no
    # finding, whatever their body's header says)
    joined = "\n\0\n".join([v for _, v in values])
    candidates = _candidates(joined, joined.lower())
    if not candidates or (honour_override and honoured_override(entry) is not None):
        return []
    out: list[Finding] = []
    for name, value in values:
        out.extend(scan(value, name, candidates))
    return out


def refuse_credentials(entry: Scanned, honour_override: bool = True) -> None:
    """The gate every new entry passes (`Entry.new` calls it):
    raises SecretError, naming kinds and positions, when the entry holds a credential.
    Only a human's own write is told how to record a false positive."""
    findings = entry_findings(entry, honour_override)
    if findings:
        human = honour_override and getattr(entry, "agent", None) == HUMAN_AGENT
        raise refusal(findings, teach_override=human)


MAX_REASON_CHARS = 200


def record_override(body: str, reason: str) -> str:
    """The body with an `allow-secret: REASON` header: the deliberate, reasoned override of a
    false positive, hashed with the entry so it can neither be dropped nor added later."""
    from .blocks import render_header

    why = (reason or "").strip()
    if not why or any(ch in why for ch in "\r\n") or len(why) > MAX_REASON_CHARS:
        raise InputError(f"--allow-secret needs a reason: one line of 1-{MAX_REASON_CHARS} characters")
    if allowed(body) is not None:
        return body
    return render_header({ALLOW_HEADER: why}) + (body or "")


def refusal(findings: Iterable[Finding], subject: str = "the entry", teach_override: bool = False) -> SecretError:
    """The SecretError that refuses a write, one finding a line: kinds and positions,
    never the secret. `teach_override` names `--allow-secret`: only for a human's write
    from the command line (an agent is never taught how to get past the gate)."""
    items = list(findings)
    shown = [f"  {f.describe()}" for f in items[:10]]
    more = [f"  ... and {len(items) - 10} more"] if len(items) > 10 else []
    return SecretError(
        f"refused: {subject} holds what looks like a credential; nothing was written:",
        *shown,
        *more,
        (
            "Remove it (and rotate it if it was real). If it is not a secret, write the entry with "
            "--allow-secret REASON (log, checkpoint), which records why in its body."
            if teach_override
            else "Remove it (and rotate it if it was real); if it is not a secret, a human decides that."
        ),
    )
