"""Full-text recall over the cache's FTS5 index: BM25, summary weighted over body.

The user's words are never passed to FTS5 as syntax: the query is split into
words, folded, stopwords dropped, and each word quoted (prefix match from four
characters). Abstention is absolute, not relative to the best hit: an entry must
contain more than half of the query's informative words, so a query unrelated to
the ledger returns nothing even when some word happens to match.

Rule: with n informative words, an entry must contain all of them when n <= 2, and
at least half (rounded up) when n >= 3. Words are lightly stemmed (deployment ->
deploy*), and words of four or more characters match as prefixes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

SUMMARY_WEIGHT = 3.0
# Recency as a signal next to relevance: score = bm25 * (1 + RECENCY_WEIGHT * 2^(-age/HALF_LIFE)),
# age in days before the ledger's newest entry (not the wall clock: the same ledger ranks
# the same way on every machine and every day).
RECENCY_WEIGHT = 0.25
HALF_LIFE_DAYS = 90.0
BODY_WEIGHT = 1.0
CANDIDATES = 200
PREFIX_FROM = 4
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset("""
a an and are as at be but by can could did do does for from had has have how i if in into is it its
me my no not of on or our should so than that the their them then there these they this to was we were
use used using uses
what when where which who why will with would you your about after all also any been before being both
each few more most other some such only own same too very just over under again further once here
o os a as e de do da dos das em no na nos nas um uma para por com que se
""".split())


def fold(text: str) -> str:
    """Lowercase and strip accents (matches FTS5's remove_diacritics)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ures", "ure",
             "ers", "er", "ies", "es", "ed", "s")


def stem(word: str) -> str:
    """A light suffix strip so that a prefix match finds the word's relatives."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= PREFIX_FROM:
            return word[: -len(suffix)]
    return word


def query_terms(query: str) -> list:
    seen, out = set(), []
    for w in _WORD.findall(fold(query)):
        if w in STOPWORDS:
            continue
        t = stem(w)
        if t in seen:
            continue
        seen.add(t)
        out.append(t)
    return out


def needed(n: int) -> int:
    """How many of n informative query words an entry must contain to count as a hit."""
    return n if n <= 2 else (n + 1) // 2


def match_expression(terms: list) -> str:
    return " OR ".join(f'"{t}"*' if len(t) >= PREFIX_FROM else f'"{t}"' for t in terms)


@dataclass
class Hit:
    id: str
    score: float
    coverage: float


def _covers(term: str, words: set) -> bool:
    if len(term) >= PREFIX_FROM:
        return any(w.startswith(term) for w in words)
    return term in words


def _days(ts: str) -> float:
    from datetime import datetime
    return datetime.fromisoformat(ts.rstrip("Z")).timestamp() / 86400.0


def search(db, query: str, k: int = 5, recency: bool = True) -> list:
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    rows = db.execute(
        "SELECT e.id, e.summary, e.body, e.ts, bm25(fts, ?, ?) AS s FROM fts JOIN entries e "
        "ON e.rowid = fts.rowid WHERE fts MATCH ? AND e.ok = 1 ORDER BY s LIMIT ?",
        (SUMMARY_WEIGHT, BODY_WEIGHT, match_expression(terms), CANDIDATES)).fetchall()
    need = needed(len(terms))
    newest = db.execute("SELECT MAX(ts) FROM entries WHERE ok = 1").fetchone()[0]
    hits = []
    for entry_id, summary, body, ts, score in rows:
        words = set(_WORD.findall(fold(summary + " " + body)))
        matched = sum(1 for t in terms if _covers(t, words))
        if matched < need:
            continue
        relevance = -score  # FTS5's bm25() is negative: smaller is better
        if recency and newest:
            age = max(0.0, _days(newest) - _days(ts))
            relevance *= 1.0 + RECENCY_WEIGHT * 2.0 ** (-age / HALF_LIFE_DAYS)
        hits.append(Hit(entry_id, relevance, matched / len(terms)))
    hits.sort(key=lambda h: (-h.coverage, -h.score, h.id))
    return hits[:k]
