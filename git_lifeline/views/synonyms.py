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
    ("outage", "incident", "downtime", "down", "unavailab", "failure", "broke", "broken", "crash", "root cause", "postmortem", "post mortem", "rca"),
    ("bug", "defect", "fault", "regression", "error"),
    ("pay", "payment", "charge", "checkout", "billing", "invoice", "card", "processor", "psp", "acquirer", "stripe", "adyen", "braintree", "paypal"),
    ("payout", "pay out", "salary", "wage", "earning", "remunerat", "compensat"),
    ("refund", "chargeback", "reimburse"),
    ("message", "event", "queue", "bus", "broker", "kafka", "rabbitmq", "pubsub", "pub sub", "stream", "async", "asynchronous", "nats", "sqs"),
    ("job", "task", "worker", "background", "cron", "schedul", "async", "task queue", "celery", "sidekiq"),
    ("cache", "caching", "memoiz", "redis", "memcache"),
    ("test", "testing", "e2e", "end to end", "integration test", "qa", "unit test", "unit", "smoke test", "cypress", "playwright", "selenium"),
    ("monitor", "metric", "observab", "dashboard", "alert", "alerting", "pager", "on call", "oncall", "paged", "paging", "pagerduty", "opsgenie", "grafana", "prometheus", "datadog", "woken", "wake up"),
    ("log", "logging", "logger"),
    ("secret", "credential", "key", "token", "vault", "kms"),
    ("host", "hosting", "cloud", "aws", "gcp", "azure", "region", "datacenter", "data center"),
    ("container", "docker", "kubernet", "k8s", "orchestrat", "cluster", "pod", "vm", "vms", "virtual machine", "ec2", "serverless", "lambda", "nomad", "ecs", "helm"),
    ("ci", "pipeline", "build", "continuous integration"),
    ("flag", "feature flag", "toggle", "gradual", "canary", "experiment", "a/b", "kill switch", "dark launch"),
    ("notif", "notification", "sms", "text message", "push", "email", "e-mail", "mail"),
    ("photo", "picture", "image", "signature", "proof"),
    ("storage", "store", "bucket", "s3", "blob", "object storage", "saved", "upload"),
    ("offline", "no signal", "connectivity", "no network", "disconnected", "sync"),
    ("map", "tile", "mapbox", "google maps", "osm", "openstreetmap"),
    ("address", "geocod", "location", "coordinate", "latitude", "longitude", "gps", "lat", "lng", "lon", "latlng"),
    ("autocomplete", "typeahead", "suggest", "completion", "typing", "type ahead", "as you type"),
    ("price", "pricing", "fee", "tariff", "surge", "cost", "rate"),
    ("retention", "retain", "delete", "deletion", "erase", "erasure", "gdpr", "privacy", "purge", "wipe", "right to be forgotten"),
    ("backup", "restore", "disaster recovery", "dr", "snapshot", "replica"),
    ("translat", "i18n", "locali", "l10n", "language"),
    ("timezone", "time zone", "utc", "timestamp", "clock"),
    ("monorepo", "repository", "repo", "polyrepo"),
    ("review", "approval", "approve", "pull request", "merge request", "pr", "reviewer", "lgtm", "codeowner"),
    ("version", "versioning", "semver", "v1", "v2", "deprecat"),
    ("rate limit", "throttl", "quota", "limit", "flood", "too many requests", "429"),
    ("admin", "back office", "backoffice", "internal tool", "console", "panel", "admin panel", "ops tool"),
    ("accessib", "a11y", "screen reader", "wcag", "contrast"),
    ("debt", "legacy", "old", "rewrite", "refactor", "cleanup"),
    ("eta", "estimate", "arrival", "predict", "forecast", "accurate", "accuracy", "on time"),
    ("cash", "cod", "cash on delivery"),
    ("tenant", "multi tenant", "multitenan", "franchise", "partner", "white label"),
    ("fraud", "abuse", "fake", "scam", "risk"),
    ("support", "helpdesk", "help desk", "ticket", "zendesk", "customer service"),
    ("analytic", "warehouse", "bigquery", "snowflake", "redshift", "bi", "report", "analyst", "dbt", "looker", "metabase"),
    ("id", "identifier", "uuid", "ulid", "snowflake id", "sequence"),
    ("load test", "stress test", "performance test", "benchmark", "capacity", "peak", "christmas", "black friday", "holiday season", "busy season", "rush"),
    ("dependenc", "library", "package", "upgrade", "update", "renovate", "dependabot", "lib", "libs", "bump"),
    ("api", "endpoint", "rest", "graphql", "grpc", "interface"),
    ("mobile", "app", "ios", "android", "react native", "flutter", "kotlin", "swift", "cross platform", "native"),
    ("courier", "driver", "rider", "delivery person", "delivery people", "deliverer"),
    ("customer", "user", "client", "buyer", "sender", "recipient"),
    ("route", "routing", "itinerary", "path", "optimi", "dispatch", "assign"),
    ("error tracking", "sentry", "crash report", "exception", "bugsnag", "rollbar"),
    ("secur", "vulnerab", "exploit", "leak", "expos", "breach"),
    ("slow", "latency", "performance", "fast", "speed"),
)
