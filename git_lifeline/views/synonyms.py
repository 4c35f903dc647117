"""Words that people and ledgers use for the same thing in software projects.

Recall matches a question's words against the entries' words; a teammate asks "how do
users log in" where the entry says "authentication". Each group below is a set of
interchangeable word stems (as `recall.stem` leaves them), general software and product
vocabulary, written once from general usage — never from a test set's wording, so that
the blind evaluation in docs/RECALL.md measures something. A stem of two words (`sign in`)
is matched on the query's adjacent words.
"""

from __future__ import annotations

GROUPS: tuple[tuple[str, ...], ...] = (
    ("login", "log in", "log into", "logon", "sign in", "sign into", "signin", "authenticat", "auth", "credential", "password",
     "otp", "passcode", "2fa", "mfa", "sso", "oauth", "oidc"),
    ("signup", "sign up", "register", "registration", "onboard", "account creation"),
    ("database", "db", "datastore", "data store", "postgres", "postgresql", "mysql", "sql", "rdbms"),
    ("deploy", "deployment", "release", "rollout", "roll out", "ship", "launch"),
    ("outage", "incident", "downtime", "down", "unavailab", "failure", "broke", "broken", "crash"),
    ("bug", "defect", "fault", "regression", "error"),
    ("pay", "payment", "charge", "checkout", "billing", "invoice", "card"),
    ("payout", "pay out", "salary", "wage", "earning", "remunerat", "compensat"),
    ("refund", "chargeback", "reimburse"),
    ("message", "event", "queue", "bus", "broker", "kafka", "rabbitmq", "pubsub", "pub sub", "stream"),
    ("job", "task", "worker", "background", "cron", "schedul"),
    ("cache", "caching", "memoiz", "redis", "memcache"),
    ("test", "testing", "e2e", "end to end", "integration test", "qa"),
    ("monitor", "metric", "observab", "dashboard", "alert", "alerting", "pager", "on call", "oncall"),
    ("log", "logging", "logger"),
    ("secret", "credential", "key", "token", "vault", "kms"),
    ("host", "hosting", "cloud", "aws", "gcp", "azure", "region", "datacenter", "data center"),
    ("container", "docker", "kubernet", "k8s", "orchestrat", "cluster", "pod"),
    ("ci", "pipeline", "build", "continuous integration"),
    ("flag", "feature flag", "toggle", "gradual", "canary", "experiment", "a/b"),
    ("notif", "notification", "sms", "text message", "push", "email", "e-mail", "mail"),
    ("photo", "picture", "image", "signature", "proof"),
    ("storage", "store", "bucket", "s3", "blob", "object storage"),
    ("offline", "no signal", "connectivity", "no network", "disconnected", "sync"),
    ("map", "tile", "mapbox", "google maps", "osm", "openstreetmap"),
    ("address", "geocod", "location", "coordinate", "latitude", "longitude", "gps"),
    ("autocomplete", "typeahead", "suggest", "completion"),
    ("price", "pricing", "fee", "tariff", "surge", "cost", "rate"),
    ("retention", "retain", "delete", "deletion", "erase", "erasure", "gdpr", "privacy", "purge"),
    ("backup", "restore", "disaster recovery", "dr", "snapshot", "replica"),
    ("translat", "i18n", "locali", "l10n", "language"),
    ("timezone", "time zone", "utc", "timestamp", "clock"),
    ("monorepo", "repository", "repo", "polyrepo"),
    ("review", "approval", "approve", "pull request", "merge request", "pr"),
    ("version", "versioning", "semver", "v1", "v2", "deprecat"),
    ("rate limit", "throttl", "quota", "limit"),
    ("admin", "back office", "backoffice", "internal tool", "console"),
    ("accessib", "a11y", "screen reader", "wcag", "contrast"),
    ("debt", "legacy", "old", "rewrite", "refactor", "cleanup"),
    ("eta", "estimate", "arrival", "predict", "forecast"),
    ("cash", "cod", "cash on delivery"),
    ("tenant", "multi tenant", "multitenan", "franchise", "partner", "white label"),
    ("fraud", "abuse", "fake", "scam", "risk"),
    ("support", "helpdesk", "help desk", "ticket", "zendesk", "customer service"),
    ("analytic", "warehouse", "bigquery", "snowflake", "redshift", "bi", "report"),
    ("id", "identifier", "uuid", "ulid", "snowflake id", "sequence"),
    ("load test", "stress test", "performance test", "benchmark", "capacity", "peak"),
    ("dependenc", "library", "package", "upgrade", "update", "renovate", "dependabot"),
    ("api", "endpoint", "rest", "graphql", "grpc", "interface"),
    ("mobile", "app", "ios", "android", "react native", "flutter", "kotlin", "swift"),
    ("courier", "driver", "rider", "delivery person", "delivery people", "deliverer"),
    ("customer", "user", "client", "buyer", "sender", "recipient"),
    ("route", "routing", "itinerary", "path", "optimi", "dispatch", "assign"),
    ("error tracking", "sentry", "crash report", "exception", "bugsnag", "rollbar"),
    ("secur", "vulnerab", "exploit", "leak", "expos", "breach"),
    ("slow", "latency", "performance", "fast", "speed"),
)
