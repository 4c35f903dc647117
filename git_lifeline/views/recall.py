"""Recall over the cache: the entries a question is about, or nothing.

Lexical recall (the default install) reads the cache's FTS5 index. The user's words are
never passed to FTS5 as syntax: the query is folded, split into words, stopwords are
dropped and each word is quoted. A question's words become *concepts*: a word (lightly
stemmed, matched as a prefix from four characters) together with the words software
teams use for the same thing (`synonyms.GROUPS`: "log in" finds "authentication").

Abstention weighs the concepts by how informative they are in this ledger (BM25's idf):
the question is answered only when its best entry matches enough of the question's weight,
less a penalty for the weight carried by words the ledger never uses (`ANSWER_FLOOR`,
`UNSEEN_PENALTY`); the entries below it are then ranked by BM25 weighted by their own
coverage. A word the ledger never uses weighs the most, so a question about something the
ledger does not know ("drone pilots") is refused even when a common word ("delivery")
matches everywhere; a paraphrase whose rare words are found by synonyms is answered.

Semantic recall (the `[semantic]` extra with a local model, views/semantic.py) adds cosine
similarity of sentence embeddings: the two scores are fused, and a question is answered when
its best entry's answer probability (views/recall_answer.py, docs/RECALL.md) reaches its floor.

The decision, each hit's strength and the truth's order (an entry in force ranks above a
superseded one, and a superseded hit brings the entry that replaced it in front of it) are
views/recall_answer.py's.
"""

from __future__ import annotations

import math
import sqlite3
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Literal, Optional, Protocol

from .recall_words import PREFIX_FROM, STOPWORDS, WORD, fold, stem
from .synonyms import GROUPS

SUMMARY_WEIGHT = 3.0
BODY_WEIGHT = 1.0
# Recency next to relevance: score * (1 + RECENCY_WEIGHT * 2^(-age/HALF_LIFE)), age in days
# before the ledger's newest entry (not the wall clock: a ledger ranks the same everywhere).
RECENCY_WEIGHT = 0.25
HALF_LIFE_DAYS = 90.0
CANDIDATES = 200
# A question longer than this is refused, not searched: each word costs a pass over the
# synonym table and each concept one more FTS query, so a megabyte from an agent would
# hold recall for minutes. A paragraph fits. Counted as folded (`question_length`).
MAX_QUESTION_CHARS = 4000
# Abstention, decided once per question. Each concept weighs its idf in this ledger; a word
# the ledger never uses weighs the most. The question is answered when its best entry's
# coverage (the share of that weight it matches) less UNSEEN_PENALTY times the share carried
# by words the ledger never uses reaches ANSWER_FLOOR: "what is the smartwatch app built
# with" matches the app and its framework, but "watch" is a word the ledger never uses and
# pulls it below the floor; "what do we use for async jobs, celery or bullmq?" keeps enough
# of its weight in the entries to be answered. With a model, a logistic model's probability
# per entry decides (views/recall_answer.py) and must reach SEMANTIC_FLOOR; it was fitted
# leaving one blind domain out at a time (bench/eval_decision.py, docs/RECALL.md).
ANSWER_FLOOR = 0.20  # coverage - UNSEEN_PENALTY * unseen share must reach this
UNSEEN_PENALTY = 0.5  # how much of an unseen word's weight counts against the question
BODY_ONLY = 0.9  # a concept found only in the why counts for less than one in the summary
# A ledger of a few entries: BM25's idf makes a word the ledger never uses weigh 2.6 times one
# it uses once in two entries, so one unseen word ("certificate" where the entry says "cert")
# vetoed two exact ones. The weights are computed as if PRIOR_ENTRIES more entries shared none
# of the question's words (negligible at thousands), and the unseen share counts in
# proportion to n / (n + UNSEEN_HALF) for a ledger of n entries: two entries' vocabulary
# says little about what a question's other words mean.
PRIOR_ENTRIES = 20
UNSEEN_HALF = 10
ABBREVIATION_FROM = 4  # a word the ledger never uses matches a ledger word it starts with, from 4 letters
ABBREVIATED = 0.8  # ... and counts for less than the word itself
FORMS_AT_MOST = 16  # words of one question looked up so (a pasted page must not cost seconds)
TYPO_FROM = 8  # a word the ledger never uses, from 8 letters, matches a ledger word one slip apart
COVERAGE_BASE = 0.25  # ranking: -bm25 * (COVERAGE_BASE + coverage)^2 (tune half: hit@1 up, hit@5 equal)
SEMANTIC_FLOOR = 0.62  # with a model: answered when the best entry's answer probability reaches this
SEMANTIC_WEIGHT = 0.7  # the fused score: w * cosine + (1 - w) * normalised lexical score


def question_length(query: str) -> int:
    """A question's length as recall reads it: folded, since one character can fold into many
    (U+FDFA into 18 characters and four words). Folded only when the text itself fits."""
    return len(query) if len(query) > MAX_QUESTION_CHARS else len(fold(query))


def _alt_words(alt: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in WORD.findall(fold(alt)))


_GROUP_WORDS: tuple[tuple[tuple[str, ...], ...], ...] = tuple(tuple(_alt_words(a) for a in g) for g in GROUPS)


def _word_matches(alt: str, word: str) -> bool:
    return word.startswith(alt) if len(alt) >= PREFIX_FROM else word == alt


class Words:
    """A text's stems in order, indexed so that a concept's alternatives are looked up rather
    than scanned for: a question's concepts hold dozens of alternatives and each is asked of
    up to CANDIDATES entries."""

    def __init__(self, stems: list[str]):
        self.stems = stems
        self.positions: dict[str, list[int]] = {}
        for i, w in enumerate(stems):
            self.positions.setdefault(w, []).append(i)
        self.sorted = sorted(self.positions)

    def _starts(self, alt: str) -> list[int]:
        """Positions of the words `alt` matches (equal, or starting with it from PREFIX_FROM)."""
        if len(alt) < PREFIX_FROM:
            return self.positions.get(alt, [])
        out: list[int] = []
        i = bisect_left(self.sorted, alt)
        while i < len(self.sorted) and self.sorted[i].startswith(alt):
            out += self.positions[self.sorted[i]]
            i += 1
        return out

    def has(self, alt: tuple[str, ...]) -> bool:
        """Whether the words of `alt` occur here one after another."""
        n = len(alt)
        return any(
            i + n <= len(self.stems) and all(_word_matches(alt[j], self.stems[i + j]) for j in range(1, n))
            for i in self._starts(alt[0])
        )


@dataclass
class Concept:
    """One idea of the question: the words that express it (each a tuple of stems), and the
    ledger's own forms of a word it never uses (`abbreviations`, `ledger_forms`: words of the
    ledger as FTS5 holds them, matched as whole words only, since "cert" for "certificate" must
    not find "certain")."""

    text: str
    alternatives: set[tuple[str, ...]] = field(default_factory=set)
    abbreviations: frozenset[str] = frozenset()
    word: str = ""  # the question's word as written (folded), for a concept of one word

    def found_in(self, text: "Words") -> bool:
        return any(text.has(alt) for alt in self.alternatives)

    def abbreviated_in(self, text: "Words") -> bool:
        return any(stem(a) in text.positions for a in self.abbreviations)

    def match_expression(self) -> str:
        parts = [f'"{a}"' for a in sorted(self.abbreviations)]
        for alt in sorted(self.alternatives):
            if len(alt) == 1:
                parts.append(f'"{alt[0]}"*' if len(alt[0]) >= PREFIX_FROM else f'"{alt[0]}"')
            else:
                parts.append('"' + " ".join(alt) + '"')
        return " OR ".join(parts)


def _stem_matches(member: str, word: str) -> bool:
    if member == word:
        return True
    if len(member) >= PREFIX_FROM and word.startswith(member):
        return True
    return len(word) > PREFIX_FROM and member.startswith(word)


def _groups_of(alt: tuple[str, ...]) -> list[tuple[tuple[str, ...], ...]]:
    """The synonym groups that hold `alt`: a word matches a member it starts with ("notification"
    and "notif"), or one it begins when it is long enough to be a stem itself ("authent" and
    "authenticat"; "logo" is not the start of "logon")."""
    out = []
    for members in _GROUP_WORDS:
        for m in members:
            if len(m) != len(alt):
                continue
            if all(_stem_matches(b, a) for b, a in zip(m, alt, strict=False)):
                out.append(members)
                break
    return out


def concepts(query: str) -> list[Concept]:
    """The question's concepts, in order: phrases of the synonym table first, then words."""
    raw = WORD.findall(fold(query))
    words = [stem(w) for w in raw]
    used = [False] * len(words)
    found: list[tuple[int, Concept]] = []
    for members in _GROUP_WORDS:  # multi-word phrases ("sign in") before their words
        for m in members:
            if len(m) < 2:
                continue
            for i in range(len(words) - len(m) + 1):
                if not any(used[i : i + len(m)]) and tuple(words[i : i + len(m)]) == m:
                    for j in range(i, i + len(m)):
                        used[j] = True
                    found.append((i, Concept(" ".join(m), set(members))))
    for i, w in enumerate(words):
        if used[i] or (len(raw[i]) < 2 and not raw[i].isdigit()) or raw[i] in STOPWORDS or w in STOPWORDS:
            continue
        alts: set[tuple[str, ...]] = {(w,)}
        for members in _groups_of((w,)):
            alts |= set(members)
        found.append((i, Concept(w, alts, word=raw[i])))
    seen: set[frozenset[tuple[str, ...]]] = set()
    out: list[Concept] = []
    for _, c in sorted(found, key=lambda p: p[0]):
        key = frozenset(c.alternatives)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


class Dense(Protocol):
    """A semantic index (views/semantic.py Index): cosines to a question, and its floor."""

    floor: float

    def similarities(self, db: sqlite3.Connection, query: str) -> dict[str, float]: ...


# How a hit answers: "strong", on its own; "weak", related; "none", a nearest entry of an
# abstention (views/recall_answer.py, app/recall.py).
Strength = Literal["strong", "weak", "none"]


@dataclass
class Hit:
    id: str
    score: float  # the ranking's: relative within one question (BM25 is ~0 in a
    # ledger of one or two entries), never a measure of relevance
    coverage: float  # the share of the question's weight the entry matches, in [0, 1]
    in_force: bool = True
    replaces: Optional[str] = None  # set when this hit is shown because it replaced `replaces`
    similarity: Optional[float] = None  # the cosine to the question (semantic recall only)
    answer_score: float = 0.0  # what the answer/refuse decision reads (views/recall_answer.py)
    strength: Strength = "weak"  # "strong": it answers the question on its own; "weak": related
    summary_coverage: float = 0.0  # the share of the question's weight matched in its summary
    specific: bool = False  # it matches the question's rarest concept the ledger uses


@dataclass
class Truth:
    """What recall needs of the current truth: whether an entry is superseded (named by an
    acting correction), and the carrier in force that replaced it, following its chain of
    revisions to the end (None when a revert or nothing in force stands there). Read by id
    from the cache's standing table (views/cache_standing.py), for the candidates only."""

    superseded: Callable[[str], bool]
    successor: Callable[[str], Optional[str]]


def _days(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts.rstrip("Z")).timestamp() / 86400.0


def _df(db: sqlite3.Connection, concept: Concept, broken: int) -> int:
    """The entries matching `concept` whose id matches their content: counted in the index
    alone when the cache holds no broken row (at a million entries, reading each match's
    row to ask was most of recall's time)."""
    if not broken:
        return db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (concept.match_expression(),)).fetchone()[0]
    return db.execute(
        "SELECT count(*) FROM fts JOIN entries e ON e.rowid = fts.rowid WHERE fts MATCH ? AND e.ok = 1",
        (concept.match_expression(),),
    ).fetchone()[0]


def _corpus(db: sqlite3.Connection) -> tuple[int, int]:
    """(entries whose id matches their content, broken rows), each count read from an index."""
    rows, broken = db.execute(
        "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM entries WHERE ok=0)"
    ).fetchone()
    return rows - broken, broken


# A candidate as the ranking reads it: id, summary, body, ts, bm25 score
Candidate = tuple[str, str, str, str, float]


def _candidates(db: sqlite3.Connection, expression: str, broken: int) -> list[Candidate]:
    """The CANDIDATES best matches of `expression` by BM25, ties cut by id (not by where SQLite
    holds the rows: a cache advanced entry by entry and one built afresh give the same), of
    the entries whose id matches their content. Without broken rows, the index ranks alone
    and only the best rows (every one tied with the last) are read, not every match's."""
    weights = (SUMMARY_WEIGHT, BODY_WEIGHT)
    if broken:
        return db.execute(
            "SELECT e.id, e.summary, e.body, e.ts, bm25(fts, ?, ?) AS s FROM fts JOIN entries e "
            "ON e.rowid = fts.rowid WHERE fts MATCH ? AND e.ok = 1 ORDER BY s, e.id LIMIT ?",
            (*weights, expression, CANDIDATES),
        ).fetchall()
    wanted = 2 * CANDIDATES
    while True:
        best = db.execute(
            "SELECT rowid, bm25(fts, ?, ?) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
            (*weights, expression, wanted),
        ).fetchall()
        # every row tied with the last one kept is among them, or there are no more rows
        if len(best) < wanted or best[-1][1] > best[CANDIDATES - 1][1]:
            break
        wanted *= 4
    if len(best) > CANDIDATES:
        last = best[CANDIDATES - 1][1]
        best = [b for b in best if b[1] <= last]
    score = dict(best)
    rows: list[Candidate] = []
    for n in range(0, len(best), 500):
        chunk = [rowid for rowid, _ in best[n : n + 500]]
        marks = ",".join("?" * len(chunk))
        for rowid, entry_id, summary, body, ts in db.execute(
            f"SELECT rowid, id, summary, body, ts FROM entries WHERE rowid IN ({marks})", chunk
        ):
            rows.append((entry_id, summary, body, ts, score[rowid]))
    rows.sort(key=lambda r: (r[4], r[0]))
    return rows[:CANDIDATES]


def _idf(df: int, total: int) -> float:
    total += PRIOR_ENTRIES
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


def _unseen_idf(total: int) -> float:
    """The weight of a word the ledger never uses: the most a word can weigh, in a large ledger;
    in a small one, nearer the weight of a word it uses once, in proportion to
    `unseen_confidence` — two entries' vocabulary cannot say that "pick" in "did we pick click
    over typer" is a topic of its own."""
    sure = unseen_confidence(total)
    return sure * _idf(0, total) + (1.0 - sure) * _idf(1, total)


def unseen_confidence(total: int) -> float:
    """How much a word the ledger never uses says against a question, for a ledger of `total`
    entries (see UNSEEN_HALF)."""
    return total / (total + UNSEEN_HALF)


def _vocabulary(db: sqlite3.Connection) -> sqlite3.Connection:
    """The ledger's words (FTS5's own vocabulary, folded as the index folds them), read
    through a temporary table: nothing is written to the cache."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lifeline_vocab USING fts5vocab(main, 'fts', 'row')")
    return db


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _in_vocabulary(db: sqlite3.Connection, terms: set[str]) -> set[str]:
    """The terms of `terms` the ledger uses, as FTS5's vocabulary holds them."""
    found: set[str] = set()
    ordered = sorted(terms)
    for i in range(0, len(ordered), 500):
        chunk = ordered[i : i + 500]
        marks = ",".join("?" * len(chunk))
        rows = _vocabulary(db).execute(f"SELECT term FROM temp.lifeline_vocab WHERE term IN ({marks})", chunk)
        found |= {r[0] for r in rows}
    return found


def _one_slip(word: str) -> set[str]:
    """The words `word` would be with one slip of typing undone: a letter left out ("refrence")
    or two letters swapped ("duplciate"). Not a letter replaced or added: "internal" is not a
    slip for "interval", nor "preferences" for "references"."""
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
    out |= {a + ch + b for a, b in cuts for ch in _LETTERS}
    out.discard(word)
    return out


def _inflections(word: str) -> set[str]:
    """The forms of `word` that English spells with a changed last letter, which the light stem
    and the prefix match do not reach: "policy" and "policies", "copies" and "copy", "copied"."""
    if len(word) >= 5 and word.endswith("y") and word[-2] not in "aeiou":
        return {word[:-1] + "ies", word[:-1] + "ied"}
    if len(word) >= 6 and word.endswith(("ies", "ied")):
        return {word[:-3] + "y", word[:-3] + ("ied" if word.endswith("ies") else "ies")}
    return set()


def ledger_forms(db: sqlite3.Connection, concept: Concept) -> tuple[frozenset[str], set[tuple[str, ...]]]:
    """How the ledger writes a word of the question it never uses, read from FTS5's vocabulary:
    the words it abbreviates the question's word to ("cert" for "certificate", from
    ABBREVIATION_FROM letters, at least two shorter), the word as it was meant when one
    letter was left out or two swapped, from TYPO_FROM letters ("refrence", "accesibility"),
    and its other inflection when the last letter changes ("policies" for "policy"), all
    matched as whole words and returned first; and the word split in two words the ledger
    writes one after the other ("wi fi" for "wifi", "utf 8" for "utf8"), returned second."""
    word = concept.word
    if not word.isalnum() or word.isdigit():
        return frozenset(), set()
    short = concept.text  # the ledger's abbreviation of the word's stem: "countries" is not "count"
    slips = _one_slip(word) if len(word) >= TYPO_FROM else set()
    slips |= _inflections(word)
    asked = {short[:n] for n in range(ABBREVIATION_FROM, len(short) - 1)} | slips
    splits = [
        (word[:i], word[i:])
        for i in range(1, len(word))
        if word[i - 1].isdigit() != word[i].isdigit() or 2 <= i <= len(word) - 2
    ]
    asked |= {part for pair in splits for part in pair}
    known = _in_vocabulary(db, asked)
    whole = {t for t in known if ABBREVIATION_FROM <= len(t) < len(short) - 1 and short.startswith(t)}
    whole |= known & slips
    phrases: set[tuple[str, ...]] = {(a, b) for a, b in splits if a in known and b in known and not {a, b} & STOPWORDS}
    return frozenset(whole), phrases


@dataclass
class Lexical:
    """What the lexical pass found for one question: its hits, best first (no floor
    applied), and the share of its weight carried by words the ledger never uses."""

    hits: list[Hit]
    unseen: float
    unseen_words: tuple[str, ...] = ()  # the question's words the ledger never uses
    total: int = 0  # entries in the ledger

    def best_coverage(self) -> float:
        return max((h.coverage for h in self.hits), default=0.0)

    def answerable(self, floor: float = ANSWER_FLOOR) -> bool:
        """Whether the ledger's words carry the question (see ANSWER_FLOOR)."""
        return self.best_coverage() - UNSEEN_PENALTY * self.unseen + 1e-9 >= floor


# Indexed entries kept between questions, bounded by the characters they were built from
# once folded (about 120 bytes of index per folded character at worst; a character can fold
# into eighteen, U+FDFA into four words): a long-lived server asks about the same entries
# question after question, and a ledger of 64 KiB bodies must not grow it unbounded.
STEMMED_BUDGET_CHARS = 500_000
_stemmed_cache: OrderedDict[tuple[str, str, str], tuple[tuple[Words, Words], int]] = OrderedDict()
_stemmed_chars = 0


def _stemmed(entry_id: str, summary: str, body: str) -> tuple[Words, Words]:
    """An entry's stemmed summary, and its summary and body with a gap between them. Keyed by
    id and text: an id fixes its text, the text makes a wrong id harmless."""
    global _stemmed_chars
    key = (entry_id, summary, body)
    kept = _stemmed_cache.get(key)
    if kept is not None:
        _stemmed_cache.move_to_end(key)
        return kept[0]
    folded_summary, folded_body = fold(summary), fold(body)
    head = [stem(w) for w in WORD.findall(folded_summary)]
    found = Words(head), Words(head + [""] + [stem(w) for w in WORD.findall(folded_body)])
    size = len(folded_summary) + len(folded_body)
    if size <= STEMMED_BUDGET_CHARS // 8:
        _stemmed_cache[key] = (found, size)
        _stemmed_chars += size
        while _stemmed_chars > STEMMED_BUDGET_CHARS:
            _, (_, old_size) = _stemmed_cache.popitem(last=False)
            _stemmed_chars -= old_size
    return found


def _matched(concept: Concept, weight: float, head: Words, words: Words) -> float:
    """The weight of one concept an entry carries: whole in its summary, BODY_ONLY in its why
    only, ABBREVIATED as the ledger's abbreviation of the word."""
    if concept.found_in(words):
        return weight * (1.0 if concept.found_in(head) else BODY_ONLY)
    if concept.abbreviations and concept.abbreviated_in(words):
        return weight * ABBREVIATED * (1.0 if concept.abbreviated_in(head) else BODY_ONLY)
    return 0.0


def lexical_evidence(db: sqlite3.Connection, query: str, recency: bool = True) -> Lexical:
    """Every entry sharing the question's concepts, scored and best first."""
    cs = concepts(query)
    total, broken = _corpus(db) if cs else (0, 0)
    if not total:
        return Lexical([], 1.0)
    dfs = [_df(db, c, broken) for c in cs]
    unknown = [n for n, c in enumerate(cs) if not dfs[n] and c.word and len(c.alternatives) == 1]
    for n in unknown[:FORMS_AT_MOST]:
        cs[n].abbreviations, phrases = ledger_forms(db, cs[n])
        cs[n].alternatives |= phrases
        if cs[n].abbreviations or phrases:
            dfs[n] = _df(db, cs[n], broken)
    weights = [_idf(df, total) if df else _unseen_idf(total) for df in dfs]
    whole = sum(weights)
    unseen = unseen_confidence(total) * sum(w for w, df in zip(weights, dfs, strict=True) if not df) / whole
    rows = _candidates(db, " OR ".join(f"({c.match_expression()})" for c in cs), broken)
    newest = db.execute("SELECT MAX(ts) FROM entries WHERE ok = 1").fetchone()[0]
    # The question's most specific concept the ledger uses (highest idf among those it has):
    # a near miss shares the common words of an entry, not this one.
    used = [n for n, df in enumerate(dfs) if df]
    rarest = max(used, key=lambda n: (weights[n], -n)) if used else -1
    hits = []
    for entry_id, summary, body, ts, score in rows:
        head, words = _stemmed(entry_id, summary, body)
        parts = [_matched(c, w, head, words) for c, w in zip(cs, weights, strict=True)]
        matched = sum(parts)
        in_summary = sum(
            w for c, w, part in zip(cs, weights, parts, strict=True) if part and _matched(c, w, head, head)
        )
        coverage = matched / whole if whole else 0.0
        relevance = -score * (COVERAGE_BASE + coverage) ** 2  # FTS5's bm25() is negative: smaller is better
        if recency and newest:
            age = max(0.0, _days(newest) - _days(ts))
            relevance *= 1.0 + RECENCY_WEIGHT * 2.0 ** (-age / HALF_LIFE_DAYS)
        hit = Hit(entry_id, relevance, coverage, summary_coverage=in_summary / whole if whole else 0.0)
        hit.specific = rarest >= 0 and parts[rarest] > 0.0
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    return Lexical(hits, unseen, tuple(c.text for c, df in zip(cs, dfs, strict=True) if not df), total)
