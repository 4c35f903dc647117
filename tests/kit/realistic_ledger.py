"""A realistic ledger for the context tests and bench/bench_context.py.

Ten months of a multi-tenant invoicing API ("Tally"): 58 decisions of which ten were
later revised by a correction and one reverted, a conflict nobody resolved, a pin,
18 questions of which 3 were closed, 6 threads with two checkpoints each, incidents
with their lesson, requirements, debt, and the notes, features, fixes and releases
around them. Every text is written for this file. `build()` returns the entries
(sealed records, parents by full id, in time order) and `Facts` naming the ones a
test asks about; `scale` > 1 adds more components of the same shape (for the bench).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from git_lifeline.core.entry import Entry, new_entry

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
ANA = "Ana Souza <ana@tally.example>"
BEN = "Ben Okafor <ben@tally.example>"
MEI = "Mei Lin <mei@tally.example>"
AGENT = dict(agent="claude-code", provider="anthropic", model="claude-opus-4")
HUMAN = dict(agent="human", provider="none", model="human")

BOOTSTRAP = (
    "Tally: a multi-tenant invoicing and billing API",
    "Tally issues, sends and reconciles invoices for about 2,000 small businesses. Invoices are legal "
    "documents: they must be reproducible byte for byte and kept for ten years. The API serves a web app "
    "and customers' own integrations.",
)

# (summary, why). Decisions later revised carry the index of their correction in REVISIONS.
DECISIONS = [
    (
        "Language: Python 3.12 for the API and the workers",
        "The team knows it, and the tax, PDF and e-invoicing libraries we need are mature in Python. Latency is "
        "bound by PostgreSQL round trips, not by the interpreter; we measured 4 ms of Python per request.",
    ),
    (
        "Framework: FastAPI with pydantic v2 models",
        "OpenAPI comes from the models, which our customers' integrators asked for. Pydantic v2 validation is fast "
        "enough for 300 requests per second per instance.",
    ),
    (
        "Database: MongoDB for invoices",
        "The invoice shape is still moving; documents let us change it without migrations during the pilot.",
    ),
    (
        "Queue: Redis lists for background jobs",
        "We already run Redis for sessions; one more dependency is not worth it for a few hundred jobs a day.",
    ),
    ("Money: floats rounded at the edge", "Simplest to start; amounts are rounded to two decimals when rendered."),
    (
        "PDF rendering: wkhtmltopdf from HTML templates",
        "Designers write HTML and CSS; wkhtmltopdf is the usual tool and renders our templates correctly.",
    ),
    (
        "Auth: API keys per tenant",
        "Integrators want something they can paste into a config file; keys are scoped to one tenant.",
    ),
    (
        "Tenancy: one PostgreSQL schema per tenant",
        "Strong isolation: a missing WHERE clause cannot leak another tenant's invoices.",
    ),
    (
        "Rounding: half-up on each line item",
        "What accountants expect from a calculator; each line shows the amount that is summed.",
    ),
    (
        "Hosting: Heroku for the first year",
        "No ops team; Heroku gets us to production in a week and the bill is small at pilot scale.",
    ),
    (
        "Retries: clients may retry any 5xx",
        "Our handlers are mostly idempotent and a retry is better than a failed invoice run.",
    ),
    (
        "Search: SQL LIKE on customer names",
        "Tenants have at most a few thousand customers; LIKE is fast enough and needs nothing new.",
    ),
    (
        "API versioning: date-based versions in a header",
        "Integrators pin a date and upgrade when they want; we keep a translation layer per version. Stripe's "
        "approach, familiar to our users.",
    ),
    (
        "IDs: ULIDs for every public identifier",
        "Sortable by creation time, safe in URLs, and they do not reveal how many invoices a tenant has.",
    ),
    (
        "Invoice numbers: gapless per tenant and fiscal year",
        "Several countries require gapless numbering. Numbers are allocated in the same transaction that issues "
        "the invoice, never before; drafts have no number.",
    ),
    (
        "Immutability: an issued invoice is never updated",
        "An issued invoice is a legal document. Mistakes are fixed with a credit note that references it; the "
        "original row is append-only.",
    ),
    (
        "Currencies: one currency per invoice, ISO 4217 codes",
        "Mixed-currency invoices are illegal in most of our markets; conversion happens before issuing.",
    ),
    (
        "FX rates: ECB reference rates, fetched daily",
        "Free, official and accepted by tax offices; the rate used is stored on the invoice.",
    ),
    (
        "Tax engine: our own rules table, not a SaaS",
        "We sell in five EU countries; a SaaS costs more than an engineer and adds a network call to each quote. "
        "Rates live in a versioned table reviewed by our accountant.",
    ),
    (
        "E-invoicing: Peppol BIS 3.0 via an access point provider",
        "Required for public-sector customers in Belgium and the Netherlands; running our own access point needs a "
        "certification we cannot afford.",
    ),
    (
        "Emails: Postmark for transactional mail",
        "Deliverability for invoices matters more than price; bounces come back as webhooks we can store.",
    ),
    (
        "Webhooks: signed with HMAC-SHA256, retried for 72 hours",
        "Customers verify the signature with a shared secret; exponential backoff up to three days covers weekend "
        "outages on their side.",
    ),
    (
        "Migrations: Alembic, forward-only in production",
        "Down-migrations are never tested and lose data; a bad migration is fixed by a new one.",
    ),
    (
        "Deploys: blue-green with a database compatible with both versions",
        "Zero downtime for integrators in other time zones; every migration is split in expand and contract.",
    ),
    (
        "Observability: OpenTelemetry traces to Honeycomb",
        "Per-tenant latency questions need high-cardinality queries; Honeycomb answers them, Grafana did not.",
    ),
    (
        "Logging: JSON lines to stdout",
        "subject: log shipping\n\nThe platform collects stdout; JSON keeps fields queryable.",
    ),
    (
        "Frontend: server-rendered Jinja with htmx",
        "A small team cannot maintain a SPA and an API client; htmx covers our forms and tables.",
    ),
    (
        "Background jobs: one worker image, jobs named by module path",
        "A single image keeps deploys simple; the job name is the dotted path of the function, checked at startup.",
    ),
    (
        "Rate limits: 100 requests per second per tenant, token bucket in PostgreSQL",
        "Protects the invoice run of other tenants; a table with one row per tenant is enough at our scale.",
    ),
    (
        "Pagination: cursor-based on (created_at, id)",
        "Offset pagination skipped rows when invoices were issued during a sync; cursors are stable.",
    ),
    (
        "Time: store UTC, render in the tenant's zone",
        "Invoice dates are legal dates in the tenant's zone; everything else is UTC in the database.",
    ),
    (
        "Secrets: AWS Secrets Manager, read at startup",
        "No secrets in environment files or the repository; rotation restarts the service.",
    ),
    (
        "Backups: PITR with 35 days, monthly snapshot kept 10 years",
        "Invoices must be reproducible for ten years; monthly snapshots are cheaper than keeping the WAL.",
    ),
    (
        "Testing: property tests for tax and rounding",
        "Hand-written cases missed the sign of credit notes; Hypothesis found it in minutes.",
    ),
    (
        "Dependencies: pinned with uv lock, updated weekly by a bot",
        "Reproducible builds; small weekly updates are easier to review than a quarterly jump.",
    ),
    (
        "CSV import: streaming parser, errors reported per row",
        "Customers import 50k-line files; one bad row must not reject the file, and memory must stay flat.",
    ),
    (
        "Credit notes: negative invoices with their own number range",
        "Our accountant and two tax offices prefer a separate range; amounts are negative, never a flag.",
    ),
    (
        "Payment matching: exact amount and reference first, then fuzzy by amount and date",
        "Exact matches cover 85% of bank lines; the rest goes to a review queue rather than guessing.",
    ),
    (
        "Bank feeds: GoCardless Bank Account Data (Nordigen)",
        "Free for our volume and covers the banks our tenants use in the EU.",
    ),
    (
        "Dunning: three reminders at 7, 14 and 30 days, tenant can edit",
        "What our pilot tenants did by hand; the schedule is data, not code.",
    ),
    (
        "Feature flags: a table per tenant, no external service",
        "We need a handful of flags, per tenant, audited; a table with an admin page is enough.",
    ),
    (
        "Audit log: every write to an invoice appends a row with who and why",
        "Tax audits ask who changed what; the log is in the same transaction as the change.",
    ),
    (
        "GDPR: customer personal data pseudonymised after retention, invoices kept",
        "Invoices must be kept ten years but the customer's contact data need not; we replace it with a token.",
    ),
    (
        "Public API style: REST with JSON, no GraphQL",
        "Integrators use plain HTTP clients; GraphQL would add caching and cost-analysis problems for no one.",
    ),
    (
        "Error format: RFC 9457 problem details",
        "A standard shape that integrators' libraries already parse; we add a stable error code field.",
    ),
    (
        "Code layout: one package per bounded context",
        "invoicing, payments, tax and tenants import each other only through their public module.",
    ),
    (
        "Reviews: two approvals for migrations and tax tables",
        "Both can lose money or data; everything else needs one approval.",
    ),
    (
        "Load tests: k6 against a production-sized copy before each release",
        "The invoice run at month end is 40x the daily load; we test that shape.",
    ),
    (
        "Localisation: invoice templates per language, numbers by locale",
        "French and German invoices differ in more than words; templates are separate files.",
    ),
    ("Cache: Redis for tax rate lookups", "Tax lookups are the hottest query during the invoice run."),
    (
        "PDF storage: S3 with object lock in compliance mode",
        "Issued PDFs cannot be deleted or overwritten for ten years, even by us.",
    ),
    (
        "Reporting: a read replica for tenants' exports",
        "Exports are long scans; they must not slow down the invoice run on the primary.",
    ),
    (
        "Mobile: no native app, the web app is responsive",
        "Our users invoice from a desk; the budget goes to integrations instead.",
    ),
    (
        "Support access: time-limited impersonation with the tenant's consent",
        "Support needs to see what the customer sees; every session is logged and expires after an hour.",
    ),
    (
        "Logging: ship logs to Loki with the OpenTelemetry collector",
        "subject: log shipping\n\nLogs should carry trace ids so a slow invoice run can be followed from a log line; "
        "the collector ships them to Loki instead of the platform's stdout capture.",
    ),
    (
        "Signup: invitation only until the tax engine covers Spain",
        "Spanish tenants need SII reporting that we do not have yet.",
    ),
    (
        "Numbers: Decimal with 4 places for unit prices, 2 for totals",
        "Utilities bill unit prices with more than two decimals; totals are in minor units.",
    ),
    (
        "Status page: hosted by Instatus, updated by on-call",
        "Integrators asked where to look during incidents; a hosted page stays up when we are down.",
    ),
]

# index of the decision -> (summary, why) of the correction that carries the truth now.
REVISIONS = {
    2: (
        "Database: PostgreSQL 16 for invoices and ledgers",
        "Auditors need transactions across invoice, ledger and audit rows; MongoDB's multi-document transactions "
        "were slow and our schema settled after the pilot. Row-level security also serves tenancy.",
    ),
    3: (
        "Queue: SQS with a dead-letter queue",
        "A Redis failover lost 214 invoice emails in June. SQS gives at-least-once delivery and a dead-letter "
        "queue we can replay; jobs became idempotent by invoice id.",
    ),
    4: (
        "Money: integer minor units everywhere",
        "Floats produced a 0.01 difference between the PDF total and the ledger on 37 invoices. Amounts are "
        "integers of the currency's minor unit in code, database and API.",
    ),
    5: (
        "PDF rendering: WeasyPrint in a worker",
        "wkhtmltopdf is unmaintained and its Qt WebKit has open CVEs; WeasyPrint renders our templates after small "
        "CSS changes and runs in the worker image, so PDFs are built off the request path.",
    ),
    6: (
        "Auth: OAuth2 client credentials, API keys deprecated",
        "Keys were pasted into support tickets twice. Client credentials give short-lived tokens and scopes; keys "
        "keep working until 2026-06-30 and log a deprecation warning.",
    ),
    7: (
        "Tenancy: shared tables with tenant_id and row-level security",
        "With 2,000 schemas a migration took 40 minutes and connection pools exploded. One set of tables with "
        "tenant_id and PostgreSQL row-level security keeps isolation enforced by the database.",
    ),
    8: (
        "Rounding: half-even on the invoice total per tax rate",
        "The EU VAT directive allows rounding per rate on the total; half-up per line overcharged by a cent on "
        "long invoices and two tenants complained.",
    ),
    9: (
        "Hosting: AWS ECS Fargate in eu-central-1",
        "Data residency in the EU for public-sector customers, and Heroku's cost tripled with the worker fleet.",
    ),
    10: (
        "Retries: idempotency keys required on POST",
        "A retried POST issued a duplicate invoice with a new number, which a gapless range cannot undo. POSTs "
        "need an Idempotency-Key header; the response is stored for 24 hours.",
    ),
    11: (
        "Search: PostgreSQL full-text with a GIN index",
        "A tenant with 60k customers made LIKE scans take 2 s; full-text search with unaccent answers in 20 ms.",
    ),
}
OPEN_THREAD = ("payments", 3)  # the payments thread works on the partial-payments question
REVERTED = 49  # "Cache: Redis for tax rate lookups": reverted, no decision in force replaces it
PINNED = 4  # money as integer minor units: the foundation every other module assumes

OPENS = [
    (
        "Should credit notes be allowed after the fiscal year is closed?",
        "Our accountant says yes in France, unclear in Germany. Blocks the year-end close feature.",
    ),
    (
        "Spain: SII reporting, build or buy?",
        "Spanish tenants must report invoices within four days. Two vendors quoted; building it means an XML signer.",
    ),
    ("Which Peppol access point provider?", "Three candidates; price per document and onboarding time differ."),
    (
        "Partial payments: allocate to oldest invoice or let the customer choose?",
        "Tenants disagree; the bank line often has no reference.",
    ),
    (
        "Multi-entity tenants: one tenant with several legal entities?",
        "Two large prospects have sister companies sharing customers; numbering and VAT ids differ per entity.",
    ),
    (
        "Archive format for the 10-year retention",
        "PDF/A-3 with embedded XML, or PDF plus a separate JSON? Tax offices accept both; migration cost differs.",
    ),
    ("Rate limit per API client instead of per tenant?", "One integration can starve the web app of the same tenant."),
    ("Drop Python 3.11 support in the SDK?", "Half of integrator traffic still reports 3.11."),
    (
        "Recurring invoices: cron-like rules or fixed periods?",
        "Fixed periods cover 90% of requests; cron rules cover the rest but confuse users.",
    ),
    ("Usage-based billing: meter events through the public API?", "Needs a high-volume ingestion path we do not have."),
    ("Refunds through the payment provider or by bank transfer?", "Fees differ; some customers paid by transfer."),
    (
        "Data export for churned tenants: how long do we keep it?",
        "Legal wants 90 days; storage is cheap but GDPR asks for minimisation.",
    ),
    ("Dark mode for invoice previews?", "Designers asked; PDFs must stay printable."),
    ("Should reminders be sent on weekends?", "Pilot tenants split; some customers complained about Sunday emails."),
    ("Customer portal: magic links or passwords?", "Customers open one invoice a month; passwords get forgotten."),
    (
        "Move the tax rules table to a versioned YAML in the repository?",
        "Reviews would be diffs; the accountant does not use git.",
    ),
    ("OpenAPI SDK generation: in-house templates or a vendor?", "Our generated Python SDK has rough edges."),
    ("Late fees: percentage or fixed amount?", "Germany caps them; France has a fixed 40 EUR indemnity."),
]
CLOSED_OPENS = {
    2: "Peppol access point: Storecove, cheapest per document and onboarded in two weeks.",
    7: "Python 3.11 stays supported until its end of life in the SDK; the cost is one CI job.",
    12: "No dark mode for invoice previews: the preview must look like the printed PDF.",
}

INCIDENTS = [
    (
        "Invoice run stalled for 3 hours at month end",
        "The job queue filled with PDF renders while a Redis failover dropped the ack keys.\n\n"
        "Lesson: jobs must be idempotent by invoice id and the queue must survive a node loss; see the SQS decision.",
    ),
    (
        "Duplicate invoice numbers for one tenant",
        "Two workers allocated numbers outside the issuing transaction.\n\n"
        "Lesson: allocate gapless numbers only inside the transaction that issues the invoice.",
    ),
    (
        "Webhook signatures rejected after a secret rotation",
        "We rotated the signing secret without a grace period and 40 integrations rejected our calls for a day.\n\n"
        "Lesson: sign with both secrets during a 7-day overlap when rotating.",
    ),
    (
        "Tax rate for Belgian books was wrong for 11 days",
        "The rates table was edited directly in production without review.\n\n"
        "Lesson: tax tables change only through a reviewed migration, never by hand.",
    ),
    (
        "Exports slowed the primary to 4 s per request",
        "A tenant exported five years of invoices from the primary during the invoice run.\n\n"
        "Lesson: long scans go to the read replica; the export endpoint now refuses the primary.",
    ),
]
REQUIREMENTS = [
    (
        "Issued invoices are kept ten years, byte for byte",
        "Tax law in all five countries; the PDF and the data behind it must be reproducible.",
    ),
    (
        "Invoice numbers are gapless per tenant and fiscal year",
        "France, Belgium and Spain require it; a gap must be explained to a tax inspector.",
    ),
    (
        "Personal data of a customer is exportable and erasable on request",
        "GDPR articles 15 and 17, except what invoices must keep.",
    ),
    ("The API stays backward compatible for 12 months after a version date", "Promised in the integrator terms."),
    (
        "An invoice run of 50,000 invoices finishes within one hour",
        "Largest tenant's month end; they send invoices before their customers' payment runs.",
    ),
]
DEBT = [
    (
        "The tax engine reads rates with one query per line item",
        "Fine at 20 lines, slow at 2,000; batch the lookups by rate and date.",
    ),
    (
        "PDF templates duplicate the footer in every language",
        "Six copies of the same legal text; a change missed the German one in May.",
    ),
    ("Webhook retries run in the API process", "They should be jobs in the worker; a deploy drops pending retries."),
    (
        "No load test for the customer portal",
        "It shares the database with the API; an invoice-link storm at month end is untested.",
    ),
]
THREADS = [
    (
        "main",
        [
            {
                "goal": ["ship v2 of the invoicing API"],
                "done": ["idempotency keys"],
                "next": ["write the v2 migration guide"],
            },
            {
                "goal": ["ship v2 of the invoicing API"],
                "done": ["idempotency keys", "migration guide"],
                "next": ["announce v2 to integrators", "turn on deprecation warnings for API keys"],
                "blocked": ["legal review of the new terms"],
            },
        ],
    ),
    (
        "tax-engine",
        [
            {"goal": ["cover Spain"], "next": ["model IGIC rates for the Canary Islands"]},
            {
                "goal": ["cover Spain"],
                "done": ["IGIC rates"],
                "next": ["SII export format"],
                "tried": ["a vendor sandbox: its XML was rejected by the SII test service"],
            },
        ],
    ),
    (
        "pdf-worker",
        [
            {"goal": ["move rendering to WeasyPrint"], "next": ["port the German template"]},
            {
                "goal": ["move rendering to WeasyPrint"],
                "done": ["all six templates"],
                "next": ["compare 500 rendered PDFs with the old ones"],
            },
        ],
    ),
    (
        "payments",
        [
            {"goal": ["fuzzy payment matching"], "next": ["collect a sample of unmatched bank lines"]},
            {
                "goal": ["fuzzy payment matching"],
                "done": ["sample of 3,000 lines"],
                "next": ["tune the date window", "review queue UI"],
            },
        ],
    ),
    (
        "tenancy-migration",
        [
            {"goal": ["all tenants on shared tables"], "next": ["migrate the 100 smallest"]},
            {
                "goal": ["all tenants on shared tables"],
                "done": ["1,400 tenants migrated"],
                "next": ["migrate the 12 largest tenants on a weekend"],
                "blocked": ["a maintenance window from the largest tenant"],
            },
        ],
    ),
    (
        "sdk",
        [
            {"goal": ["a usable Python SDK"], "next": ["replace the generator templates"]},
            {"goal": ["a usable Python SDK"], "done": ["pagination helpers"], "next": ["typed errors"]},
        ],
    ),
]
OTHERS = [
    (
        "feature",
        "Credit notes issued from the invoice page",
        "One click creates a credit note for the remaining amount, with its own number.",
    ),
    ("feature", "Bulk send of reminders", "Select invoices and send the next reminder; respects the schedule."),
    (
        "feature",
        "Peppol delivery for Belgian public-sector customers",
        "Invoices to a Peppol id go through the access point; delivery status shown on the invoice.",
    ),
    (
        "feature",
        "CSV customer import with a preview of errors",
        "Rows with errors are shown before anything is written.",
    ),
    ("feature", "Multi-language invoice templates", "French, German, Dutch and English."),
    ("feature", "Payment matching review queue", "Unmatched bank lines are listed with the three best candidates."),
    ("feature", "Tenant-editable dunning schedule", "Days and texts per reminder."),
    ("feature", "Idempotency-Key support on every POST", "Stored responses are replayed for 24 hours."),
    ("fix", "Totals on credit notes showed a positive sign", "The template used abs(); credit notes are negative."),
    ("fix", "Reminder emails used the server's time zone", "Now the tenant's zone decides the send date."),
    ("fix", "CSV import choked on a BOM", "The parser now strips a UTF-8 byte order mark."),
    ("fix", "Webhook retries stopped after a deploy", "Pending retries are persisted before shutdown."),
    ("fix", "FX rate missing on bank holidays", "Use the last published ECB rate, as tax offices allow."),
    ("fix", "Pagination cursor broke with equal timestamps", "The cursor now includes the id."),
    ("milestone", "Pilot with 20 tenants completed", "All invoices of March issued through Tally."),
    ("milestone", "1,000 paying tenants", "Reached in month seven."),
    ("release", "v1.0: public API and web app", "First public release."),
    ("release", "v1.4: Peppol and credit notes", "E-invoicing for Belgium and the Netherlands."),
    ("note", "Accountant review of the tax tables is monthly", "Ines reviews changes on the first Monday."),
    ("note", "Month-end load is 40x the daily average", "Measured over the pilot; plan capacity for it."),
    ("note", "Integrators mostly use Python and PHP", "From the user-agent of API calls."),
    ("note", "The largest tenant issues 48,000 invoices a month", "Mostly on the last working day."),
    ("note", "Support tickets about PDFs dropped after WeasyPrint", "From 30 a month to 4."),
    ("note", "GoCardless rate limits bank feeds to 4 syncs a day", "Plan matching runs accordingly."),
    ("test", "Property tests for rounding across 5 currencies", "Hypothesis, 10,000 examples per run."),
    ("service", "Worker service: PDF, email and webhook jobs", "One image, scaled on queue depth."),
    ("api", "POST /v2/invoices accepts an Idempotency-Key", "Required from v2."),
    ("note", "Security review of the customer portal booked", "External firm, two weeks in October."),
    ("note", "Our Peppol provider has a 99.9% SLA", "Credits apply below it."),
    ("note", "Tax offices accepted our credit note numbering", "Confirmed in writing by two offices."),
    ("fix", "Reminders went to archived customers", "Archived customers are skipped by the dunning job."),
    (
        "note",
        "Month-end invoice run took 41 minutes for the largest tenant",
        "Within the one-hour requirement, with 9 workers.",
    ),
    ("feature", "Customer portal shows paid and open invoices", "Read-only; links expire after 30 days."),
    (
        "note",
        "Peppol rejects invoices without a buyer reference",
        "Public-sector buyers require it; the form now asks for it.",
    ),
]


@dataclass
class Facts:
    """Ids a test asks about (full ids)."""

    bootstrap: str = ""
    corrections: list[str] = field(default_factory=list)  # corrections that carry the truth
    superseded: list[str] = field(default_factory=list)  # decisions they replaced
    reverted: str = ""
    pinned: str = ""
    opens: list[str] = field(default_factory=list)  # still open
    incidents: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    debt: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)


def _checkpoint_body(thread: str, sections: Mapping[str, Sequence[str]]) -> str:
    out = f"thread: {thread}\n"
    for name in ("goal", "done", "next", "blocked", "tried"):
        if sections.get(name):
            out += f"{name}:\n" + "".join(f"  - {item}\n" for item in sections[name])
    return out


class _Writer:
    def __init__(self, start: datetime):
        self.entries: list[Entry] = []
        self.clock = start

    def add(
        self,
        kind: str,
        summary: str,
        body: str,
        parents: Sequence[str] = (),
        author: str = ANA,
        hours: float = 7.0,
        who: Mapping[str, str] = HUMAN,
    ) -> Entry:
        self.clock += timedelta(hours=hours)
        e = new_entry(
            kind=kind,
            summary=summary,
            body=body,
            author=author,
            parents=list(parents),
            ts=self.clock,
            agent=who["agent"],
            provider=who["provider"],
            model=who["model"],
        )
        self.entries.append(e)
        return e


def _component(w: _Writer, facts: Facts, prefix: str) -> None:
    """One component's history over ten months: decisions every few days, revisions of
    early ones in the middle, questions, incidents and threads along the way."""

    def name(summary: str) -> str:
        return f"{prefix}{summary}" if prefix else summary

    authors = [ANA, BEN, MEI]
    decisions: list[Entry] = []
    opens: list[Entry] = []
    heads: dict[str, Entry] = {}
    revised_at = {min(i + 14, len(DECISIONS) - 1): i for i in REVISIONS}

    def checkpoint(thread: str, step: int, hours: float) -> None:
        key = label = f"{prefix.strip().lower()}-{thread}" if prefix else thread
        if thread == OPEN_THREAD[0]:  # this thread works on an open question: it is keyed by the open's id
            key, label = opens[OPEN_THREAD[1]].id, opens[OPEN_THREAD[1]].summary[:60]
        sections = dict(THREADS)[thread][step]
        parents = [heads[thread].id] if thread in heads else []
        heads[thread] = w.add(
            "checkpoint",
            f"checkpoint {label}: {sections['next'][0]}",
            _checkpoint_body(key, sections),
            parents=parents,
            author=ANA,
            hours=hours,
        )
        if step == 0:
            facts.threads.append(key)

    for n, (summary, why) in enumerate(DECISIONS):
        who = AGENT if n % 5 == 3 else HUMAN
        decisions.append(w.add("decision", name(summary), why, author=authors[n % 3], hours=120, who=who))
        if n % 6 == 5:
            w.add(*OTHERS[(n // 6) % len(OTHERS)], author=authors[(n + 1) % 3])
        if n % 3 == 0 and n // 3 < len(OPENS):
            q, why = OPENS[n // 3]
            opens.append(w.add("open", name(q), why, author=authors[n % 3], hours=3))
        if n % 10 == 9:
            summary, why = INCIDENTS[n // 10]
            facts.incidents.append(w.add("incident", name(summary), why, author=BEN, hours=30).id)
            w.add(*OTHERS[(n // 10 + 10) % len(OTHERS)], author=MEI)
        if n % 11 == 1 and n // 11 < len(REQUIREMENTS):
            summary, why = REQUIREMENTS[n // 11]
            facts.requirements.append(w.add("requirement", name(summary), why, author=MEI, hours=20).id)
        if n in (15, 27, 38, 50):
            summary, why = DEBT[(15, 27, 38, 50).index(n)]
            facts.debt.append(w.add("debt", name(summary), why, author=BEN, hours=20).id)
        if n in revised_at:
            index = revised_at[n]
            summary, why = REVISIONS[index]
            k = len(facts.corrections) % 10
            fix = w.add(
                "correction",
                name(summary),
                why,
                parents=[decisions[index].id],
                author=authors[k % 3],
                hours=6,
                who=AGENT if k % 4 == 1 else HUMAN,
            )
            facts.corrections.append(fix.id)
            facts.superseded.append(decisions[index].id)
            if index == PINNED:
                facts.pinned = fix.id
            if k < len(THREADS):
                checkpoint(THREADS[k][0], 0, 5)
        if n == 55:
            facts.reverted = decisions[REVERTED].id
            w.add(
                "correction",
                name("Revert: no Redis cache for tax rates"),
                "action: revert\n\nThe rates table fits in memory in each worker; a cache added a failure mode "
                "for nothing.",
                parents=[facts.reverted],
                author=MEI,
                hours=12,
            )
        closing = {40: 2, 44: 7, 48: 12}.get(n)
        if closing is not None:
            answer = CLOSED_OPENS[closing]
            w.add("correction", name(answer), "Closed: " + answer, parents=[opens[closing].id], author=BEN, hours=8)
    facts.opens.extend(o.id for n, o in enumerate(opens) if n not in CLOSED_OPENS)
    for thread, _ in THREADS:
        checkpoint(thread, 1, 6)
    w.add(
        "note",
        name("Pin: money in minor units is the foundation"),
        f"pin: {facts.pinned}\n\nEvery module assumes integer amounts.",
        parents=[facts.pinned],
        author=ANA,
        hours=2,
    )
    for kind, summary, why in OTHERS[9:10] + OTHERS[15:]:
        w.add(kind, name(summary), why, author=authors[len(w.entries) % 3], hours=9)


def build(scale: int = 1) -> tuple[list[Entry], Facts]:
    """(entries in time order, Facts). scale 1 is the 150-entry ledger of the tests."""
    w = _Writer(T0)
    facts = Facts()
    facts.bootstrap = w.add("bootstrap", BOOTSTRAP[0], BOOTSTRAP[1], author=ANA).id
    prefixes = [""] + [f"C{n} " for n in range(2, scale + 1)]
    for prefix in prefixes:
        _component(w, facts, prefix)
    return w.entries, facts
