"""Synthetic ledgers for the benchmarks, in lifeline-context's LIFELINE.md format.

    python bench/gen.py --scenario realistic --size 10000 --seed 1 --out LIFELINE.md
    python bench/gen.py --scenario chain --size 1000 --out chain.md    # one decision revised 1,000 times
    python bench/gen.py --scenario pairs --size 1000 --out pairs.md    # 1,000 decision+correction pairs
    python bench/gen.py --scenario plain --size 10000 --out plain.md   # the earlier benchmarks' ledger shape
    python bench/gen.py --size 1000000 --seed 1 --repo REPO --line bench  # straight into git, in packs
    python bench/gen.py --size 125000 --seed 2 --salt " (b)" --db part.db  # a lifeline-context SQLite ledger

Both tools import the same file (`git lifeline import --from`, `lifeline migrate
--from`), so every measurement compares the same content. Everything is drawn from
one `random.Random(seed)`: the same scenario, size and seed give the same bytes.

The realistic scenario writes the shapes a ledger kept for months holds, in about
the shares of one: 45% decisions, 12% corrections, 8% open items, 6% incidents, and
the other thirteen kinds in the rest (one bootstrap first). Corrections are
revisions of decisions in force (some revised again and again: revision chains),
reverts (`action: revert`), closings of open items, unpins and corrections of
checkpoints and incidents. Pins are notes with a `pin:` header naming their parent;
threads are entries with a `thread:` header chained to the thread's head, some of
them named by an open item's id, with checkpoints (goal/done/next/blocked/tried);
relations link two entities. Everything else chains to the line's head, as
lifeline-context's `log` does.

Entries are built directly (the id from `core.entry.compute_id`), not through
the validating model: validation is the importers' job, and the smoke test
(tests/interop/test_bench_generator.py) checks that `git lifeline import` accepts a ledger.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from git_lifeline.core.entry import compute_id  # noqa: E402

SCENARIOS = ("realistic", "chain", "pairs", "plain")
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)
# Every ledger fits in two years from its start, whatever its size: at one entry every 10
# minutes a million entries would run to 2042, and verify rightly refuses entries dated in
# the future of its clock (core/clock.py). Up to ~105k entries the spacing stays 600 s, so
# those sizes give the same bytes as before.
SPAN_SECONDS = 2 * 365 * 24 * 3600
STEP_SECONDS = 600

# Shares of the realistic scenario (bootstrap: the first entry only).
SHARES = {
    "decision": 0.45,
    "correction": 0.12,
    "open": 0.08,
    "incident": 0.06,
    "note": 0.05,
    "feature": 0.04,
    "fix": 0.04,
    "checkpoint": 0.04,
    "test": 0.02,
    "requirement": 0.02,
    "debt": 0.02,
    "api": 0.015,
    "service": 0.015,
    "milestone": 0.01,
    "release": 0.01,
    "relation": 0.01,
}
# What a correction does, with its weight (a kind of correction whose target is
# missing at that point falls through to the next one that has one).
CORRECTION_KINDS = (
    ("revise", 0.40),
    ("close", 0.40),
    ("revert", 0.10),
    ("unpin", 0.04),
    ("checkpoint", 0.03),
    ("other", 0.03),
)
THREAD_SHARE = 0.18  # entries of the chainable kinds that go on a thread
PIN_SHARE = 0.15  # notes that pin a decision
CHAIN_BIAS = 0.35  # revisions that revise a recently revised decision again
SUBJECT_SHARE = 0.6  # decisions whose summary starts with "Subject: " (what conflicts compare)

COMPONENTS = (
    "storage",
    "auth",
    "billing",
    "search",
    "ingest",
    "scheduler",
    "api gateway",
    "cache",
    "notifications",
    "reporting",
    "export",
    "sync",
    "permissions",
    "audit log",
    "frontend",
    "mobile client",
    "cli",
    "deploy",
    "metrics",
    "alerting",
    "backup",
    "queue",
    "payments",
    "onboarding",
    "localization",
    "rate limiter",
    "feature flags",
    "webhooks",
    "importer",
    "session store",
    "file uploads",
    "email",
    "pdf renderer",
    "admin console",
    "tenant model",
    "data retention",
    "ci pipeline",
    "docs site",
    "sdk",
    "graph view",
)
ASPECTS = (
    "database",
    "retention",
    "timeout",
    "retry policy",
    "format",
    "library",
    "hosting",
    "schema",
    "batch size",
    "encryption",
    "ownership",
    "rollout",
    "versioning",
    "index",
    "limits",
    "protocol",
)
CHOICES = (
    "PostgreSQL",
    "SQLite in WAL mode",
    "a 30-day window",
    "90 days",
    "exponential backoff",
    "JSON lines",
    "protobuf",
    "a managed service",
    "our own cluster",
    "five seconds",
    "two minutes",
    "at most 500 rows",
    "AES-GCM at rest",
    "the platform team",
    "a staged rollout",
    "semantic versions",
    "a partial index",
    "a hard cap of 10,000",
    "HTTP/2",
    "plain TCP with framing",
    "Redis",
    "an in-process LRU",
    "nightly snapshots",
    "streaming writes",
    "one table per tenant",
)
REASONS = (
    "it keeps the write path simple",
    "the measurements showed it was the fastest option",
    "the team already operates it",
    "it is the cheapest at our volume",
    "the old way lost data twice",
    "customers asked for it in the last review",
    "it removes a whole class of outages",
    "it is what the auditors require",
    "it can be rolled back in one step",
    "the alternative needs a migration we cannot afford this quarter",
)
ALTERNATIVES = (
    "MySQL",
    "MongoDB",
    "a cron job",
    "a message broker",
    "an external vendor",
    "doing nothing",
    "a bigger machine",
    "a rewrite",
    "client-side caching",
    "a second region",
)
THREADS = (
    "storage-engine",
    "auth-rework",
    "billing-v2",
    "search-relevance",
    "mobile-launch",
    "perf-pass",
    "gdpr-export",
    "ci-speedup",
)
AGENTS = (
    ("human", "none", "human"),
    ("human", "none", "human"),
    ("human", "none", "human"),
    ("claude-code", "anthropic", "claude-sonnet-4"),
    ("codex", "openai", "gpt-5"),
    ("gemini-cli", "google", "gemini-2.5-pro"),
)
PEOPLE = (
    "Ana Souza",
    "Bruno Lima",
    "Chen Wei",
    "Dana Kovacs",
    "Emeka Obi",
    "Fatima Haddad",
    "Goran Petrov",
    "Hana Sato",
    "Ivan Horvat",
    "Julia Meyer",
    "Kofi Mensah",
    "Lena Fischer",
    "Mateo Rossi",
)
RELATIONS = ("depends_on", "implements", "tests_covers", "supersedes")


@dataclass
class GenEntry:
    """An entry with the attributes `core.seed.render_seed_markdown` writes."""

    kind: str
    author: str
    agent: str
    provider: str
    model: str
    summary: str
    body: str
    parents: list
    ts: datetime
    id: str = ""

    def seal(self) -> "GenEntry":
        self.body = self.body.strip()
        self.parents = sorted(set(self.parents))
        self.id = compute_id(
            self.kind, self.author, self.agent, self.provider, self.model, self.summary, self.body, self.parents
        )
        return self


class _Live:
    """Ids in the order they were added, some later removed: `random.choice` and
    indexing see only the live ones, in that order, exactly as a list would, but
    removing one costs O(log n) instead of a scan of the list (a Fenwick tree over
    the positions). At 1,000,000 entries the list scans of `remove` and `in` were
    what kept the generator from finishing."""

    def __init__(self) -> None:
        self._items: list = []  # every id ever added, by position
        self._tree: list = [0]  # Fenwick tree of live counts, 1-based
        self._where: dict = {}  # id -> its live positions, oldest first
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def append(self, key: str) -> None:
        self._items.append(key)
        i = len(self._items)
        low = i & -i
        count, j = 1, i - 1
        while j > i - low:
            count += self._tree[j]
            j -= j & -j
        self._tree.append(count)
        self._where.setdefault(key, []).append(i)
        self._live += 1

    def remove(self, key: str) -> None:
        places = self._where[key]
        i = places.pop(0)
        if not places:
            del self._where[key]
        self._live -= 1
        while i < len(self._tree):
            self._tree[i] -= 1
            i += i & -i

    def __getitem__(self, k: int) -> str:
        """The k-th live id (0-based, negative from the end)."""
        if k < 0:
            k += self._live
        if not 0 <= k < self._live:
            raise IndexError(k)
        pos, step, size = 0, 1 << (len(self._items).bit_length()), len(self._items)
        while step:
            if pos + step <= size and self._tree[pos + step] <= k:
                pos += step
                k -= self._tree[pos]
            step >>= 1
        return self._items[pos]

    def pop(self, k: int) -> str:
        key = self[k]
        self.remove(key)
        return key

    def tail(self, n: int) -> list:
        """The newest `n` live ids, oldest first (a list's `[-n:]`)."""
        return [self[k] for k in range(max(0, self._live - n), self._live)]


@dataclass
class _Book:
    """What the generator remembers to pick realistic targets."""

    head: Optional[str] = None
    carriers: _Live = field(default_factory=_Live)  # decisions/revisions in force (ids)
    revised: list = field(default_factory=list)  # carriers that are revisions (recent last)
    replaced: dict = field(default_factory=dict)  # revision id -> the carrier it replaced
    subject: dict = field(default_factory=dict)  # carrier id -> its subject text
    depth: dict = field(default_factory=dict)  # revision id -> revisions since the decision
    opens: _Live = field(default_factory=_Live)  # open items still open
    opens_by_thread: dict = field(default_factory=dict)  # id[:12] -> open items of that prefix
    pins: list = field(default_factory=list)  # live pin notes
    checkpoints: list = field(default_factory=list)  # live checkpoints
    others: list = field(default_factory=list)  # incidents and fixes (correctable)
    entities: list = field(default_factory=list)  # anything a relation may link
    thread_heads: dict = field(default_factory=dict)  # thread name -> head id
    counts: dict = field(default_factory=dict)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


class Generator:
    def __init__(
        self,
        seed: int = 0,
        salt: str = "",
        start: datetime = T0,
        sink: Optional[Callable[[GenEntry], None]] = None,
        expected: int = 0,
    ):
        self.rng = random.Random(seed)
        # seconds between entries: `expected` entries end within SPAN_SECONDS of `start`
        self.step = max(1, min(STEP_SECONDS, SPAN_SECONDS // max(expected, 1)))
        self.salt = salt
        self.start = start
        self.entries: list = []  # what was written, oldest first (empty when a sink takes them)
        self.written = 0
        self.sink = sink if sink is not None else self.entries.append
        self.book = _Book()

    # ---- building blocks -------------------------------------------------------------
    def _who(self) -> tuple:
        agent, provider, model = self.rng.choice(AGENTS)
        person = self.rng.choice(PEOPLE)
        email = person.split()[0].lower() + "@example.com"
        return f"{person} <{email}>", agent, provider, model

    def _ts(self) -> datetime:
        # strictly increasing (the jitter stays within 5/6 of a step), one entry every
        # `step` seconds (~10 minutes up to ~105k entries), never on a whole second
        i = self.written
        jitter = self.rng.randint(0, self.step * 5 // 6)
        return self.start + timedelta(seconds=i * self.step + jitter, microseconds=1 + i % 999_983)

    def _emit(self, kind: str, summary: str, body: str, parents: list) -> GenEntry:
        author, agent, provider, model = self._who()
        e = GenEntry(kind, author, agent, provider, model, summary + self.salt, body, parents, self._ts()).seal()
        self.sink(e)
        self.written += 1
        self.book.head = e.id
        self.book.count(kind)
        return e

    def _head(self) -> list:
        return [self.book.head] if self.book.head else []

    def _prose(self, lines: int = 2) -> str:
        r = self.rng
        out = [f"We compared it with {r.choice(ALTERNATIVES)} and chose this because {r.choice(REASONS)}."]
        for _ in range(lines - 1):
            out.append(f"- measured: {r.randint(3, 900)} ms p95 on {r.choice(COMPONENTS)}")
        if r.random() < 0.3:
            out.append(f"- reviewed by: {r.choice(PEOPLE)}")
        return "\n".join(out)

    def _subject(self) -> str:
        # most decisions are about something new; some come back to a subject already
        # decided (a conflict, until a revision settles it)
        k = self.rng.randrange(max(40, self.written // 2))
        comp = COMPONENTS[k % len(COMPONENTS)]
        aspect = ASPECTS[(k // len(COMPONENTS)) % len(ASPECTS)]
        round_ = k // (len(COMPONENTS) * len(ASPECTS))
        return f"{comp.capitalize()} {aspect}" + (f" {round_ + 1}" if round_ else "")

    def _thread_for(self) -> Optional[str]:
        if self.rng.random() >= THREAD_SHARE:
            return None
        if self.book.opens and self.rng.random() < 0.3:
            return self.rng.choice(self.book.opens.tail(20))[:12]  # work on an open item's thread
        return self.rng.choice(THREADS)

    def _on_thread(self, thread: Optional[str], kind: str, summary: str, body: str) -> GenEntry:
        if thread is None:
            return self._emit(kind, summary, body, self._head())
        head = self.book.thread_heads.get(thread)
        if head is None:
            # a thread named by an open item: its 12-character prefix (names never are hex)
            opened = [o for o in self.book.opens_by_thread.get(thread, ()) if o in self.book.opens]
            head = opened[0] if opened else self.book.head
        e = self._emit(kind, summary, f"thread: {thread}\n\n{body}", [head] if head else [])
        self.book.thread_heads[thread] = e.id
        self.book.count("on a thread")
        return e

    # ---- the kinds ------------------------------------------------------------------
    def bootstrap(self) -> None:
        self._emit(
            "bootstrap",
            "Acme ledger service: the reasoning log of the Acme platform",
            "A multi-tenant platform for order processing. Python services, PostgreSQL, one repo.",
            [],
        )

    def decision(self) -> None:
        r = self.rng
        subject = self._subject()
        choice = r.choice(CHOICES)
        header = ""
        if r.random() < 0.10:
            header += f"paths: src/{subject.split()[0].lower()}/**\n"
        if r.random() < 0.02:
            header += "valid-until: " + r.choice(("2024-06-30", "2031-12-31")) + "\n"
        body = (header + "\n" if header else "") + self._prose(r.randint(1, 4))
        summary = f"{subject}: {choice}" if r.random() < SUBJECT_SHARE else f"Use {choice} for the {subject.lower()}"
        e = self._on_thread(self._thread_for(), "decision", summary, body)
        self.book.carriers.append(e.id)
        self.book.subject[e.id] = subject
        self.book.entities.append(e.id)

    def open_item(self) -> None:
        r = self.rng
        e = self._emit(
            "open",
            f"Should {r.choice(COMPONENTS)} move to {r.choice(CHOICES)}?",
            f"Unclear whether {r.choice(REASONS)}; needs a measurement first.",
            self._head(),
        )
        self.book.opens.append(e.id)
        self.book.opens_by_thread.setdefault(e.id[:12], []).append(e.id)

    def checkpoint(self) -> None:
        r = self.rng
        if r.random() < 0.15:
            thread = None  # the main thread
        elif self.book.opens and r.random() < 0.3:
            thread = r.choice(self.book.opens.tail(20))[:12]  # an open item's thread
        else:
            thread = r.choice(THREADS)
        comp = r.choice(COMPONENTS)
        body = (
            f"goal:\n  - finish the {comp} change\n"
            f"done:\n  - measured {r.randint(2, 99)} cases\n  - wrote the migration\n"
            f"next:\n  - review with {r.choice(PEOPLE)}\n"
        )
        if r.random() < 0.3:
            body += f"blocked:\n  - waiting on {r.choice(COMPONENTS)}\n"
        if r.random() < 0.3:
            body += f"tried:\n  - {r.choice(ALTERNATIVES)}: too slow\n"
        e = self._on_thread(thread, "checkpoint", f"Checkpoint: {comp} work on {thread or 'main'}", body)
        self.book.checkpoints.append(e.id)

    def note(self) -> None:
        r = self.rng
        if self.book.carriers and r.random() < PIN_SHARE:
            target = r.choice(self.book.carriers)
            e = self._emit(
                "note",
                f"pin: {self.book.subject.get(target, 'decision')}",
                f"pin: {target}\n\nEvery new contributor must know this one.",
                [target],
            )
            self.book.pins.append(e.id)
            self.book.count("pin")
            return
        self._on_thread(self._thread_for(), "note", f"Note on {r.choice(COMPONENTS)}", self._prose(2))

    def relation(self) -> None:
        ents = self.book.entities
        if len(ents) < 2:
            return self.note()
        a, b = self.rng.sample(ents[-200:], 2)
        rel = self.rng.choice(RELATIONS)
        self._emit("relation", f"{rel}: {a[:8]} -> {b[:8]}", f"rel: {rel}\nfrom: {a}\nto: {b}", [a, b])

    def simple(self, kind: str) -> None:
        r = self.rng
        comp = r.choice(COMPONENTS)
        summaries = {
            "incident": f"Incident: {comp} returned errors for {r.randint(2, 90)} minutes",
            "feature": f"Feature: {comp} supports {r.choice(CHOICES)}",
            "fix": f"Fix: {comp} no longer drops requests under load",
            "test": f"Test: {comp} covered by a property test",
            "requirement": f"Requirement: {comp} must answer within {r.randint(1, 9)}00 ms",
            "debt": f"Debt: {comp} still uses {r.choice(ALTERNATIVES)}",
            "api": f"API: {comp} exposes a versioned endpoint",
            "service": f"Service: {comp} runs as its own deployment",
            "milestone": f"Milestone: {comp} in production for every tenant",
            "release": f"Release {r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} of {comp}",
        }
        thread = self._thread_for() if kind in ("feature", "fix", "test", "debt") else None
        e = self._on_thread(thread, kind, summaries[kind], self._prose(r.randint(1, 3)))
        self.book.entities.append(e.id)
        if kind in ("incident", "fix"):
            self.book.others.append(e.id)

    def correction(self) -> bool:
        """One correction; False when nothing can be corrected yet (the caller defers it)."""
        r = self.rng
        order = [k for k, _ in CORRECTION_KINDS]
        first = r.choices(order, weights=[w for _, w in CORRECTION_KINDS])[0]
        order = order[order.index(first) :] + order[: order.index(first)]
        for what in order:
            if getattr(self, f"_correct_{what}")():
                self.book.count(f"correction: {what}")
                return True
        return False

    def _correct_revise(self) -> bool:
        b, r = self.book, self.rng
        if not b.carriers:
            return False
        live_revised = [x for x in b.revised[-30:] if x in b.carriers]
        target = r.choice(live_revised) if live_revised and r.random() < CHAIN_BIAS else r.choice(b.carriers)
        subject = b.subject.get(target, self._subject())
        e = self._emit(
            "correction",
            f"{subject}: {r.choice(CHOICES)} (revised)",
            f"Revises the earlier choice: {r.choice(REASONS)}.\n\n{self._prose(1)}",
            [target],
        )
        b.carriers.remove(target)
        b.carriers.append(e.id)
        b.revised.append(e.id)
        b.replaced[e.id] = target
        b.subject[e.id] = subject
        b.depth[e.id] = b.depth.get(target, 0) + 1
        b.counts["longest revision chain"] = max(b.counts.get("longest revision chain", 0), b.depth[e.id])
        return True

    def _correct_revert(self) -> bool:
        b, r = self.book, self.rng
        if not b.carriers:
            return False
        target = r.choice(b.carriers)
        self._emit(
            "correction",
            f"Revert: {b.subject.get(target, 'decision')}",
            f"action: revert\n\nReverted: {r.choice(REASONS)} turned out to be wrong.",
            [target],
        )
        b.carriers.remove(target)
        before = b.replaced.get(target)
        if before is not None:  # reverting a revision brings the previous choice back
            b.carriers.append(before)
        return True

    def _correct_close(self) -> bool:
        b, r = self.book, self.rng
        if not b.opens:
            return False
        target = b.opens.pop(r.randrange(len(b.opens)))  # the same draw as on a list
        self._emit(
            "correction",
            "Closed: the open question is answered",
            f"Answered after measuring: {r.choice(REASONS)}.",
            [target],
        )
        return True

    def _correct_unpin(self) -> bool:
        b, r = self.book, self.rng
        if not b.pins:
            return False
        target = b.pins.pop(r.randrange(len(b.pins)))
        self._emit("correction", "Unpin", "action: revert\n\nUnpinned: no longer foundational.", [target])
        return True

    def _correct_checkpoint(self) -> bool:
        b = self.book
        if not b.checkpoints:
            return False
        target = b.checkpoints.pop()
        self._emit(
            "correction",
            "Checkpoint was wrong: the migration is not written yet",
            "The previous checkpoint stands.",
            [target],
        )
        return True

    def _correct_other(self) -> bool:
        b, r = self.book, self.rng
        if not b.others:
            return False
        target = b.others.pop(r.randrange(len(b.others)))
        self._emit(
            "correction",
            "Root cause corrected",
            f"The cause was {r.choice(COMPONENTS)}, not what the first report said.",
            [target],
        )
        return True

    # ---- scenarios ------------------------------------------------------------------
    def realistic(self, n: int) -> list:
        """`n` entries in about the shares of SHARES, the bootstrap first."""
        if n <= 0:
            return self.entries
        self.bootstrap()
        kinds = list(SHARES)
        counts = {k: int(SHARES[k] * (n - 1)) for k in kinds}
        short = (n - 1) - sum(counts.values())
        for k in sorted(kinds, key=lambda k: -(SHARES[k] * (n - 1) % 1))[:short]:
            counts[k] += 1
        schedule = [k for k in kinds for _ in range(counts[k])]
        self.rng.shuffle(schedule)
        deferred = 0  # corrections drawn before anything could be corrected: written later
        for kind in schedule:
            if kind == "correction":
                if not self.correction():
                    deferred += 1
                continue
            self._kind(kind)
            while deferred and self.correction():
                deferred -= 1
        for _ in range(deferred):
            self.decision()
        return self.entries

    def _kind(self, kind: str) -> None:
        if kind == "decision":
            self.decision()
        elif kind == "open":
            self.open_item()
        elif kind == "checkpoint":
            self.checkpoint()
        elif kind == "note":
            self.note()
        elif kind == "relation":
            self.relation()
        else:
            self.simple(kind)

    def chain(self, n: int) -> list:
        """One decision revised `n` times, each revision correcting the previous one."""
        self.bootstrap()
        d = self._emit("decision", "Data retention: keep 30 days", "Enough for audits; storage is cheap.", self._head())
        prev = d.id
        for k in range(1, n + 1):
            prev = self._emit(
                "correction",
                f"Data retention: keep {30 + k} days (revision {k})",
                f"Revision {k}: {self.rng.choice(REASONS)}.",
                [prev],
            ).id
        return self.entries

    def plain(self, n: int) -> list:
        """The earlier benchmarks' ledger: one chain of eight kinds in turn, no correction,
        no header (kept to compare with figures taken on it)."""
        kinds = ("decision", "note", "feature", "fix", "open", "incident", "test", "debt")
        for k in range(n):
            comp = COMPONENTS[k % len(COMPONENTS)]
            self._emit(kinds[k % len(kinds)], f"Entry {k}: a decision about {comp}", self._prose(3), self._head())
        return self.entries

    def pairs(self, n: int) -> list:
        """`n` independent decisions, each corrected once."""
        self.bootstrap()
        for k in range(n):
            subject = f"Component {k} {self.rng.choice(ASPECTS)}"
            d = self._emit("decision", f"{subject}: {self.rng.choice(CHOICES)}", self._prose(1), self._head())
            self._emit(
                "correction",
                f"{subject}: {self.rng.choice(CHOICES)} (revised)",
                f"Revises it: {self.rng.choice(REASONS)}.",
                [d.id],
            )
        return self.entries


def expected_entries(scenario: str, size: int) -> int:
    """About how many entries `scenario` writes for `size` (pairs: two each)."""
    return 2 * size if scenario == "pairs" else size + 1


def generate(scenario: str, size: int, seed: int = 0, salt: str = "", start: datetime = T0) -> tuple:
    """(entries oldest first, counts of the shapes written) of `scenario`.

    realistic: `size` entries; chain: one decision revised `size` times; pairs: `size`
    decision+correction pairs; plain: `size` entries of eight kinds in one chain. `salt` is appended to every summary (a second ledger
    of the same shape with other ids); `start` is the time of the first entry."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    g = Generator(seed, salt, start, expected=expected_entries(scenario, size))
    entries = getattr(g, scenario)(size)
    return entries, dict(sorted(g.book.counts.items()))


def stats(entries: list, shapes: Optional[dict] = None) -> dict:
    kinds: dict = {}
    for e in entries:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    n = len(entries) or 1
    ordered = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    out = {"entries": len(entries), "kinds": dict(ordered), "shares": {k: round(v / n, 4) for k, v in ordered}}
    if shapes:
        out["shapes"] = {k: v for k, v in shapes.items() if k not in kinds}
    return out


def write_ledger(path: Path, entries: list, line: str = "bench") -> None:
    from git_lifeline.core.seed import render_seed_markdown

    Path(path).write_text(render_seed_markdown(entries, line), encoding="utf-8", newline="")


def make(path: Path, scenario: str, size: int, seed: int = 0, salt: str = "", start: datetime = T0) -> dict:
    """Write the ledger to `path`; returns its stats."""
    entries, shapes = generate(scenario, size, seed, salt, start)
    write_ledger(path, entries)
    return stats(entries, shapes)


def stats_of_counts(counts: dict, total: int) -> dict:
    """`stats` from the generator's counts, for a ledger streamed to a repository (no list
    of its entries is kept)."""
    kinds = {k: v for k, v in counts.items() if k in SHARES or k == "bootstrap"}
    ordered = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    n = total or 1
    return {
        "entries": total,
        "kinds": dict(ordered),
        "shares": {k: round(v / n, 4) for k, v in ordered},
        "shapes": {k: v for k, v in sorted(counts.items()) if k not in kinds},
    }


def write_repo(
    repo: Path,
    scenario: str,
    size: int,
    seed: int = 0,
    line: str = "bench",
    batch: int = 125_000,
    salt: str = "",
    start: datetime = T0,
) -> dict:
    """Write the ledger straight into line `line` of the git repository at `repo`, through
    the importer's own door (git/bulk.py: git fast-import, one pack and one commit per
    `batch` entries, the ref moved by compare-and-swap), without a LIFELINE.md in between
    and without holding more than one batch: a 1,000,000-entry markdown file would be
    ~600 MB, above what `import` reads whole. Every entry is held to every rule on the
    way (the Entry constructor), as `import` would. Returns the stats and the seconds
    each stage took."""
    import time

    from git_lifeline.app.ledger import commit_message
    from git_lifeline.app.workspace import Workspace
    from git_lifeline.core.entry import Entry
    from git_lifeline.git.bulk import BulkWriter

    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    if batch < 1:
        raise ValueError("--batch must be at least 1")
    led = Workspace.open(str(repo)).ledger(line)
    pending: list = []
    commits: list = []
    t0 = time.perf_counter()

    def flush() -> None:
        writer = BulkWriter(led.store)
        try:
            for e in pending:
                writer.add(e)
            result = writer.publish(pending, commit_message)
        except BaseException:
            writer.abort()
            raise
        commits.append(result.commit)
        pending.clear()

    def sink(g: GenEntry) -> None:
        pending.append(
            Entry(
                id=g.id,
                ts=g.ts,
                kind=g.kind,
                author=g.author,
                agent=g.agent,
                provider=g.provider,
                model=g.model,
                summary=g.summary,
                body=g.body,
                parents=g.parents,
            )
        )
        if len(pending) >= batch:
            flush()

    gen = Generator(seed, salt, start, sink=sink, expected=expected_entries(scenario, size))
    getattr(gen, scenario)(size)
    if pending:
        flush()
    out = stats_of_counts(gen.book.counts, gen.written)
    out["repository"] = {"line": line, "commits": len(commits), "seconds": round(time.perf_counter() - t0, 1)}
    return out


def write_db(path: Path, scenario: str, size: int, seed: int = 0, salt: str = "", start: datetime = T0) -> dict:
    """Write the ledger as a lifeline-context SQLite ledger (the `entries` and `edges`
    tables its files hold), streamed: the seed tool's own API takes hours to write a
    million entries, and its markdown of them is above what `import` reads whole."""
    import sqlite3

    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    path = Path(path)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, "
        "ts TEXT NOT NULL, kind TEXT NOT NULL, dedup_key TEXT, parents TEXT NOT NULL, payload TEXT NOT NULL);"
        "CREATE TABLE edges (parent_id TEXT NOT NULL, child_id TEXT NOT NULL, PRIMARY KEY (parent_id, child_id));"
        "CREATE UNIQUE INDEX idx_dedup ON entries(dedup_key) WHERE dedup_key IS NOT NULL;"
        "CREATE INDEX idx_edges_child ON edges(child_id);"
    )
    rows: list = []
    edges: list = []
    seen: set = set()

    def flush() -> None:
        con.executemany(
            "INSERT INTO entries (id, ts, kind, dedup_key, parents, payload) VALUES (?, ?, ?, NULL, ?, ?)", rows
        )
        con.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?)", edges)
        rows.clear()
        edges.clear()

    def sink(g: GenEntry) -> None:
        if g.id in seen:  # the same content twice is one entry in both tools
            return
        seen.add(g.id)
        ts = g.ts.isoformat()
        doc = {
            "id": g.id,
            "ts": ts.replace("+00:00", "Z"),
            "kind": g.kind,
            "author": g.author,
            "agent": g.agent,
            "provider": g.provider,
            "model": g.model,
            "summary": g.summary,
            "body": g.body,
            "parents": g.parents,
            "dedup_key": None,
        }
        rows.append((g.id, ts, g.kind, json.dumps(g.parents), json.dumps(doc, separators=(",", ":"))))
        edges.extend((p, g.id) for p in g.parents)
        if len(rows) >= 10_000:
            flush()

    gen = Generator(seed, salt, start, sink=sink, expected=expected_entries(scenario, size))
    getattr(gen, scenario)(size)
    flush()
    con.commit()
    con.close()
    return stats_of_counts(gen.book.counts, gen.written)


def main(argv: Optional[list] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", choices=SCENARIOS, default="realistic")
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="write a LIFELINE.md (both tools import it)")
    where.add_argument("--repo", type=Path, help="write the entries into this git repository's line")
    where.add_argument("--db", type=Path, help="write a lifeline-context SQLite ledger (both tools read it)")
    ap.add_argument("--salt", default="", help="appended to every summary: the same shapes, other ids")
    ap.add_argument("--line", default="bench", help="with --repo: the line to write (default: bench)")
    ap.add_argument("--batch", type=int, default=125_000, help="with --repo: entries per pack and commit")
    args = ap.parse_args(argv)
    if args.repo is not None:
        out = write_repo(args.repo, args.scenario, args.size, args.seed, args.line, args.batch, args.salt)
    elif args.db is not None:
        out = write_db(args.db, args.scenario, args.size, args.seed, args.salt)
    else:
        out = make(args.out, args.scenario, args.size, args.seed, args.salt)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
