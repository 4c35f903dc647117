"""Architecture Decision Records: reading the markdown files adr-tools, log4brains and MADR
write, and writing MADR files. Pure: text in, values out (the app reads the directory).

What is read from one ADR file:

* the title: the first `# ` heading, without adr-tools' `2. ` numbering;
* the status: a `## Status` section (adr-tools), a `* Status:` / `- Status:` line before the
  first section (MADR 2, log4brains) or the front matter's `status:` (MADR 3/4), with the
  ADRs named after `Superseded by` and `Supersedes`;
* the date: a `Date: YYYY-MM-DD` line (also as a `*`/`-` item) or front matter `date:`;
* the body: everything else, verbatim, with front matter keys other than status and date
  written as `- Key: value` lines at its top (the lifeline header keys `subject`, `paths`,
  `thread`, `valid-from`, `valid-until` and `commit` become header fields instead);
* the links to other ADRs: `Amends [..](0005-….md)`, `Amended by …`, `Relates to …` and the
  like, in the status section (adr-tools) or a `## Links` section (MADR 2).

Any status is taken in: a word this module does not know reads as proposed, with
`status_known` false so the importer can say so; the words as written are kept.

The mapping onto entries (kinds, supersession, re-import) is app/adr.py's; docs/VIEW.md has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Optional

from ..errors import InputError

# The classes an ADR status is read as.
AdrStatus = Literal["accepted", "proposed", "rejected", "deprecated", "superseded"]
# The status words real ADRs carry and the class each is read as (docs/VIEW.md has the table:
# accepted is in force, proposed and rejected never are, deprecated and superseded were and
# are not any more). A status is matched by its first words, so "Accepted, amended by 9" reads
# as accepted.
_STATUS_WORDS: dict[str, AdrStatus] = {
    **dict.fromkeys(
        (
            "accepted",
            "approved",
            "adopted",
            "agreed",
            "decided",
            "done",
            "implemented",
            "active",
            "amended",
            "final",
            "current",
            "complete",
            "completed",
            "in force",
            "in effect",
            "enforced",
            "established",
        ),
        "accepted",
    ),
    **dict.fromkeys(
        (
            "proposed",
            "proposal",
            "draft",
            "open",
            "pending",
            "wip",
            "review",
            "in review",
            "in progress",
            "under review",
            "under discussion",
            "under consideration",
            "discussing",
            "on hold",
            "hold",
            "parked",
            "postponed",
            "deferred",
            "suggested",
            "rfc",
            "new",
            "planned",
            "paused",
            "blocked",
            "idea",
        ),
        "proposed",
    ),
    **dict.fromkeys(
        ("rejected", "declined", "refused", "not accepted", "dismissed", "won't do", "wontfix"), "rejected"
    ),
    **dict.fromkeys(
        (
            "deprecated",
            "obsolete",
            "retired",
            "withdrawn",
            "abandoned",
            "cancelled",
            "canceled",
            "revoked",
            "archived",
            "discontinued",
            "sunset",
            "expired",
            "invalidated",
            "reverted",
        ),
        "deprecated",
    ),
    **dict.fromkeys(("superseded", "superceded", "superseeded", "replaced", "overridden"), "superseded"),
}
STATUS_HEADER = "adr-status"  # the header that keeps the status as the file wrote it
MAX_STATUS_CHARS = 200
# Front matter keys that are the entry's own header fields (docs/FORMAT.md §8).
HEADER_KEYS = ("thread", "subject", "paths", "valid-from", "valid-until", "commit")
MARKER = "adr"  # the last line of an imported body: `adr: <file name>`

_FILENAME = re.compile(r"(?P<digits>\d+)[-_.].*\.(?:md|markdown)", re.IGNORECASE)
_TITLE = re.compile(r"#[ \t]+(?P<title>.*?)[ \t]*#*[ \t]*")
_NUMBERING = re.compile(r"(?:(?:ADR|RFC)[- ]?\d+|\d+)(?:[.:)]|[ \t]+[-\u2013\u2014:])[ \t]+", re.IGNORECASE)
_SECTION = re.compile(r"##[ \t]+(?P<name>.*?)[ \t]*#*[ \t]*")
_META = re.compile(r"(?:[*-][ \t]+)?(?P<key>[A-Za-z][A-Za-z -]{0,30}?)[ \t]*:[ \t]*(?P<value>.*)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_DATE = re.compile(r"['\"]?(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.]+Z?)?['\"]?")
# adr-tools wrote `Date: 12/01/1992` (day, month, year) before its records moved to ISO 8601;
# a directory never passed through `adr upgrade-repository` still has them
_DAY_FIRST_DATE = re.compile(r"(\d{2})/(\d{2})/(\d{4})")
_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]*)[^)]*\)")
# "superceded" and "superseeded" are how real ADRs (adr-tools' own among them) spell it too
_SUPERSEDED_BY = re.compile(r"super[sc]ee?ded[ \t]+by\b[ \t:]*(?P<rest>.*)", re.IGNORECASE)
_SUPERSEDES = re.compile(r"\bsuper[sc]ee?des\b[ \t:]*(?P<rest>.*)", re.IGNORECASE)
# A reference to another ADR: a markdown link, or a bare `ADR-0005` / `RFC 12`.
_REFERENCE = re.compile(
    r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]*)[^)]*\)|\b(?P<bare>(?:ADR|RFC)[- #]?\d{1,6})\b", re.IGNORECASE
)
_LINK_VERB = re.compile(r"[a-z][a-z' ]{0,40}")
# How a link's words read: (the relation, whether it points from the other ADR to this one).
# Other words (adr-tools lets a user make up "Clarifies"/"Clarified by") are a relation
# named after them, from this ADR to the other.
_LINK_WORDS = {
    "amends": ("amends", False),
    "amended by": ("amends", True),
    "relates to": ("relates-to", False),
    "related to": ("relates-to", False),
    "related": ("relates-to", False),
    "see also": ("relates-to", False),
    "see": ("relates-to", False),
    "refines": ("refines", False),
    "refined by": ("refines", True),
    "extends": ("extends", False),
    "extended by": ("extends", True),
    "clarifies": ("clarifies", False),
    "clarified by": ("clarifies", True),
    "depends on": ("depends-on", False),
    "required by": ("depends-on", True),
}
SYMMETRIC_LINKS = ("relates-to",)
_ADR_NUMBER = re.compile(r"(?:ADR|RFC)?[- #]?0*(\d{1,6})\b", re.IGNORECASE)
_MARKER_LINE = re.compile(rf"(?:\A|\n){MARKER}: (?P<file>[^\s/\\]+)\Z")


@dataclass(frozen=True)
class AdrLink:
    """A link an ADR file names to another ADR (`Amends [5. X](0005-x.md)`)."""

    rel: str  # amends, relates-to, refines, ... (lowercase words joined by dashes)
    target: str  # the other ADR as written: a file name or a number
    inward: bool  # the link points from the other ADR to this one ("Amended by")


@dataclass(frozen=True)
class Adr:
    """One ADR file, read."""

    filename: str
    key: str  # what identifies the ADR across edits (its number, see adr_key)
    number: Optional[int]
    title: str
    status: AdrStatus
    status_text: str  # as written, for messages
    date: Optional[str]  # YYYY-MM-DD
    body: str
    header: dict[str, str] = field(default_factory=dict)
    supersedes: tuple[str, ...] = ()  # references as written: file names or numbers
    superseded_by: tuple[str, ...] = ()
    status_known: bool = True  # False: a status word not in _STATUS_WORDS, read as proposed
    links: tuple[AdrLink, ...] = ()  # links to other ADRs but supersession

    @property
    def label(self) -> str:
        return f"ADR {self.number:04d}" if self.number is not None else f"ADR {self.key}"


def adr_key(filename: str) -> Optional[tuple[str, Optional[int]]]:
    """(key, number) of an ADR file name, or None when the name is not one.

    A short numeric prefix (`0002-use-postgres.md`) is the ADR's number, which stays when a
    retitled ADR is renamed; a long one (log4brains' `20240102-use-postgres.md`) is a date,
    so the whole stem is the key."""
    m = _FILENAME.fullmatch(filename)
    if not m:
        return None
    digits = m.group("digits")
    if len(digits) <= 6:
        return str(int(digits)), int(digits)
    return filename.rsplit(".", 1)[0], None


def is_adr_file(filename: str) -> bool:
    return adr_key(filename) is not None


# ---- reading ------------------------------------------------------------------------
def parse_adr(filename: str, text: str) -> Adr:
    """Read one ADR file; raises InputError naming the file when it cannot be read as one."""
    ident = adr_key(filename)
    if ident is None:
        raise InputError(f"{filename}: not an ADR file name (expected NNNN-title.md)")
    key, number = ident
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    front, lines = _front_matter(filename, text.split("\n"))
    title_at = next((i for i, line in enumerate(lines) if _TITLE.fullmatch(line)), None)
    if title_at is None:
        raise InputError(f"{filename}: no title (a '# ' heading)")
    heading = _TITLE.fullmatch(lines[title_at])
    title = _clean_title(heading.group("title")) if heading else ""
    if not title:
        raise InputError(f"{filename}: the title is empty")
    rest = lines[title_at + 1 :]
    status_raw = front.get("status")
    date_raw = front.get("date")
    kept: list[str] = []
    status_notes: list[str] = []
    link_lines: list[str] = []  # the lines of a `## Links` section (MADR 2), kept in the body too
    in_status = in_links = False
    seen_section = False
    fence: Optional[str] = None  # inside a fenced code block nothing is a section or a status
    for line in rest:
        opened = _FENCE.match(line)
        if fence is not None or opened:
            if fence is None and opened:
                fence = opened.group(1)[0] * len(opened.group(1))
            elif fence is not None and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            if not in_status:
                kept.append(line)
            continue
        section = _SECTION.fullmatch(line)
        if section:
            seen_section = True
            name = section.group("name").strip().lower()
            in_status, in_links = name == "status", name == "links"
            if in_status:
                continue
        elif in_links:
            link_lines.append(_strip_comment(line))
        if in_status:
            value = _strip_comment(line).strip()
            if value and status_raw is None:
                status_raw = value
            elif value:
                status_notes.append(value)
            continue
        meta = _META.fullmatch(line) if not seen_section else None
        if meta:
            name = meta.group("key").strip().lower()
            if name == "status" and status_raw is None:
                status_raw = _strip_comment(meta.group("value")).strip()
                continue
            if name == "date" and date_raw is None:
                date_raw = _strip_comment(meta.group("value")).strip()
                continue
        kept.append(line)
    status_text = (status_raw or "").strip()
    status, known = _status_class(status_text)
    refs_by, refs_sup = _references([status_text] + status_notes)
    links = _links([status_text] + status_notes + link_lines)
    other_notes = [n for n in status_notes if not (_SUPERSEDED_BY.search(n) or _SUPERSEDES.search(n))]
    body = "\n".join(kept).strip()
    if other_notes:
        body = (body + "\n\n" if body else "") + "## Status notes\n\n" + "\n".join(other_notes)
    header, extra = {}, []
    for k, v in front.items():
        if k in ("status", "date") or not v:
            continue
        if k in HEADER_KEYS:
            header[k] = v
        else:
            extra.append(f"- {k[:1].upper()}{k[1:]}: {v}")
    if extra:
        body = "\n".join(extra) + ("\n\n" + body if body else "")
    return Adr(
        filename=filename,
        key=key,
        number=number,
        title=title,
        status=status,
        status_text=status_text,
        date=_parse_date(filename, date_raw),
        body=body,
        header=header,
        supersedes=tuple(refs_sup),
        superseded_by=tuple(refs_by),
        status_known=known,
        links=tuple(links),
    )


def _front_matter(filename: str, lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """A YAML front matter block's scalar keys (a small subset of YAML: `key: value`, lists
    as `key: [a, b]` or `- item` lines, quotes), and the lines after it."""
    if not lines or lines[0].strip() != "---":
        return {}, lines
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise InputError(f"{filename}: the front matter (---) is not closed")
    out: dict[str, str] = {}
    current: Optional[str] = None
    for raw in lines[1:end]:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        item = re.fullmatch(r"[ \t]+-[ \t]+(.*)", raw)
        if item and current is not None:
            out[current] = (out[current] + ", " if out[current] else "") + _unquote(item.group(1))
            continue
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)", raw)
        if not m:
            raise InputError(f"{filename}: front matter line not understood: {raw.strip()[:60]!r}")
        current = m.group(1).lower()
        value = _strip_comment(m.group(2)).strip()
        if value.startswith("[") and value.endswith("]") and not _LINK.search(value):
            value = ", ".join(_unquote(v) for v in value[1:-1].split(",") if v.strip())
        out[current] = _unquote(value)
    return out, lines[end + 1 :]


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _strip_comment(text: str) -> str:
    return _COMMENT.sub("", text)


def _clean_title(title: str) -> str:
    title = _NUMBERING.sub("", title, count=1) if _NUMBERING.match(title) else title
    return " ".join(title.split())


def _status_class(text: str) -> tuple[AdrStatus, bool]:
    """(the class of AdrStatus a status reads as, whether its words are known). A status
    nobody listed is taken in as proposed: never in force until someone says so."""
    if not text:
        return "accepted", True  # MADR makes the status optional: an ADR that says nothing stands
    low = " ".join(_LINK.sub(" ", text).lower().replace("*", " ").replace("\u2019", "'").split())
    for words in sorted(_STATUS_WORDS, key=len, reverse=True):
        if re.match(rf"{re.escape(words)}(?![\w'])", low):
            return _STATUS_WORDS[words], True
    return "proposed", False


def _links(lines: list[str]) -> list[AdrLink]:
    """The links to other ADRs that status lines and `## Links` items name, supersession aside
    (that is _references'). Each reference takes the words before it ("Amends [5. X](…)");
    a reference after `and` or a comma with no words of its own takes the previous words. A
    link to something that is no ADR (a web page) is prose, not a link."""
    out: list[AdrLink] = []
    for line in lines:
        words: Optional[str] = None
        at = 0
        for m in _REFERENCE.finditer(line):
            before = line[at : m.start()]
            at = m.end()
            chunk = re.split(r"[,;(]", before)[-1]
            said = " ".join(chunk.replace("*", " ").replace("\u2019", "'").lower().strip(" \t-:.").split())
            if said and said not in ("and", "&", "or"):
                words = said
            target = _reference_target(m)
            if target is None or words is None or not _LINK_VERB.fullmatch(words) or len(words.split()) > 5:
                continue
            if _SUPERSEDED_BY.match(words) or _SUPERSEDES.match(words):
                continue  # supersession: parents, not a link (_references)
            rel, inward = _LINK_WORDS.get(words, ("-".join(words.replace("'", "").split()), False))
            link = AdrLink(rel=rel, target=target, inward=inward)
            if link not in out:
                out.append(link)
    return out


def _reference_target(m: re.Match) -> Optional[str]:
    """The ADR a reference names (a file name, or `ADR-0005`), or None for anything else."""
    if m.group("bare"):
        return m.group("bare")
    target = m.group("target").split("#", 1)[0].rsplit("/", 1)[-1]
    if target and is_adr_file(target):
        return target
    text = m.group("text").strip()
    return text if not target and _ADR_NUMBER.fullmatch(text) else None


def _references(texts: list[str]) -> tuple[list[str], list[str]]:
    """The ADRs named after `Superseded by` and after `Supersedes`, as written."""
    by: list[str] = []
    sup: list[str] = []
    for text in texts:
        m = _SUPERSEDED_BY.search(text)
        if m:
            by.extend(_refs_in(m.group("rest")))
            continue
        m = _SUPERSEDES.search(text)
        if m:
            sup.extend(_refs_in(m.group("rest")))
    return by, sup


def _refs_in(text: str) -> list[str]:
    links = list(_LINK.finditer(text))
    if links:
        out = []
        for link in links:
            target = link.group("target").split("#", 1)[0].rsplit("/", 1)[-1]
            out.append(target if target else link.group("text"))
        return out
    m = _ADR_NUMBER.search(text)
    return [m.group(1)] if m else []


def _parse_date(filename: str, raw: Optional[str]) -> Optional[str]:
    if raw is None or not raw.strip():
        return None
    m = _DATE.fullmatch(raw.strip())
    old = _DAY_FIRST_DATE.fullmatch(raw.strip())
    if not m and not old:
        raise InputError(f"{filename}: date {raw.strip()[:40]!r} is not YYYY-MM-DD (or DD/MM/YYYY)")
    day = m.group(1) if m else f"{old.group(3)}-{old.group(2)}-{old.group(1)}" if old else ""
    try:
        date.fromisoformat(day)
    except ValueError:
        raise InputError(f"{filename}: date {raw.strip()[:40]!r} does not exist") from None
    return day


def resolve_reference(ref: str, by_file: dict[str, str], by_number: dict[int, str]) -> Optional[str]:
    """The key of the ADR a reference names: a file name in the directory, else a number."""
    if ref in by_file:
        return by_file[ref]
    ident = adr_key(ref)
    if ident is not None and ident[1] is not None and ident[1] in by_number:
        return by_number[ident[1]]
    m = _ADR_NUMBER.fullmatch(ref.strip()) or _ADR_NUMBER.match(ref.strip())
    if m and int(m.group(1)) in by_number:
        return by_number[int(m.group(1))]
    return None


# ---- the entry's body ------------------------------------------------------------------
def entry_body(adr: Adr) -> str:
    """The body of an ADR's entry: its header fields, its text, and the marker line that
    ties every version of the ADR together (`adr: <file name>`)."""
    fields = dict(adr.header)
    if adr.status_text:
        fields[STATUS_HEADER] = _clip_status(adr.status_text)
    head = "".join(f"{k}: {' '.join(v.split())}\n" for k, v in fields.items())
    text = f"{head}{adr.body}".strip()
    return f"{text}\n\n{MARKER}: {adr.filename}" if text else f"{MARKER}: {adr.filename}"


def _clip_status(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_STATUS_CHARS else text[: MAX_STATUS_CHARS - 1].rstrip() + "\u2026"


def without_status(body: str) -> str:
    """An entry body without its `adr-status:` header line: what re-import compares, so that a
    status rewritten without changing what it means (adr-tools' "Superseded by [7]…" on the
    old record, "On hold" to "Draft") writes nothing."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        key = line.split(":", 1)[0]
        if key == STATUS_HEADER:
            return "\n".join(lines[:i] + lines[i + 1 :])
        if key not in HEADER_KEYS:
            break
    return body


def marker_of(body: str) -> Optional[str]:
    """The ADR file an entry was imported from (its body's last line), or None."""
    m = _MARKER_LINE.search(body)
    return m.group("file") if m else None


def strip_marker(body: str) -> str:
    m = _MARKER_LINE.search(body)
    return body[: m.start()].rstrip() if m else body


# ---- writing MADR ----------------------------------------------------------------------
def slug(title: str, limit: int = 60) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    out = "-".join(words)[:limit].strip("-")
    return out or "decision"


def madr_filename(number: int, title: str) -> str:
    return f"{number:04d}-{slug(title)}.md"


def render_madr(
    title: str, date_text: str, body: str, meta: Optional[dict[str, str]] = None, status: str = "accepted"
) -> str:
    """One MADR file (front matter, title, sections). A body that has its own `## ` sections
    (an imported ADR) is written as it is; a plain why becomes the context, and the title the
    outcome."""
    front = {"status": status, "date": date_text, **(meta or {})}
    lines = ["---"] + [f"{k}: {_yaml_scalar(v)}" for k, v in front.items() if v] + ["---", "", f"# {title}", ""]
    text = body.strip()
    if re.search(r"(?m)^##[ \t]", text):
        lines.append(text)
    else:
        lines += [
            "## Context and Problem Statement",
            "",
            text or "(no reasons recorded)",
            "",
            "## Decision Outcome",
            "",
            title,
        ]
    return "\n".join(lines).rstrip() + "\n"


def _yaml_scalar(value: str) -> str:
    value = " ".join(str(value).split())
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 ._/@<>()+*,-]*", value) and not value.endswith(":"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
