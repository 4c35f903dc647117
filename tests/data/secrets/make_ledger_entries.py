"""Build ledger_entries.json: realistic ledger entries that hold NO credential.

The false-positive corpus of the secret scanner (docs/RELIABILITY.md). Three sources:
  1. entries written for this corpus: the decisions, incidents and notes a software
     team records, deliberately full of things that look random but are not secrets
     (commit and entry ids, digests, UUIDs, public keys, cloud resource ids, token
     *shapes* described in prose, placeholders, env lookups, connection strings
     without passwords);
  2. this repository's own commit messages (subject as summary, body as the why);
  3. paragraphs of this repository's own documentation, as notes;
  4. the entries of the lifeline-context fixtures in tests/data/seed (markdown ones).
Run from the repository root: python tests/data/secrets/make_ledger_entries.py
(it rewrites the JSON; the JSON is what the tests read).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

WRITTEN = [
    (
        "decision",
        "Database: PostgreSQL 16",
        "ACID transactions are required by the audit trail; the team knows it.\nMongoDB was tried in 2023 (see 3f9a1c2) and dropped.",
    ),
    (
        "decision",
        "Auth: OAuth2 with PKCE for the SPA",
        "No client secret can live in a browser bundle, so the public client uses PKCE.\nTokens: access 15 min, refresh 30 days, rotated on use.",
    ),
    (
        "decision",
        "Password hashing: argon2id",
        "bcrypt truncates at 72 bytes. argon2id with m=64MiB, t=3, p=1 keeps login under 250 ms on the t3.small.\nThe password policy stays at 12+ characters; no composition rules (NIST 800-63B).",
    ),
    (
        "decision",
        "Secrets live in Vault, never in the repo",
        "Apps read them at start through the agent sidecar (path kv/data/app/prod).\nThe .env file is for local defaults only and is git-ignored.",
    ),
    (
        "decision",
        "API keys rotate every 90 days",
        "Rotation is automated by the key-rotator job; the old key stays valid for 24 h so deploys can roll.\nKeys are never logged: the logger masks anything under `api_key`, `token` and `password`.",
    ),
    (
        "note",
        "Token budget for context is 4000",
        "token_budget = 4000 keeps the prompt under the 8k model's window with room for the answer.\nMeasured: p95 prompt 3,712 tokens.",
    ),
    (
        "decision",
        "Use ed25519 SSH keys for deploys",
        "ssh-keygen -t ed25519 -C deploy@acme.test\nPublic key registered on the host:\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq3Xk9vD8m2Zb4Hc7yR1tL0pQs5wVe6fNa3UjK8oYxW deploy@acme.test",
    ),
    (
        "note",
        "Host key of the build server",
        "Fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 (ED25519). Check it before the first ssh.",
    ),
    (
        "decision",
        "Pin base images by digest",
        "FROM python:3.12-slim@sha256:2be8daddbb82756f7d1f2c7ece706aadcb284bf6ab6d769ea695cc3ed6016743\nTags move; digests do not, and the SBOM needs the exact layer set.",
    ),
    (
        "fix",
        "Lockfile integrity mismatch on CI",
        "npm ci failed: integrity sha512-Fz3H8hSMDGHUw3b4ZB3QcpZ6VvQ2YbmMEH9m5rT1iqtAyUkdA3n9c0JmW0tFqDkeS9c0t5iUZ8y4F3gK2d9Q1w== did not match.\nThe registry mirror served a stale tarball; purged it.",
    ),
    (
        "incident",
        "Staging down 40 minutes after cert expiry",
        "The wildcard certificate expired at 00:00 UTC. cert-manager could not renew: the DNS-01 solver's IAM role lost route53:ChangeResourceRecordSets in PR #812.\nRestored the permission; added an expiry alert at 14 days.",
    ),
    (
        "decision",
        "Commit ids in the ledger are full 40-hex",
        "Short ids collide in big monorepos. Example: the fix is 9fceb02d0ae598e95dc970b74767f19372d61af8, not 9fceb02.",
    ),
    (
        "note",
        "Entry ids are sha256 of the canonical form",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 is the sha256 of the empty string, a good sanity check.",
    ),
    (
        "decision",
        "Request ids are UUIDv7",
        "Sortable by time, so log search by range is cheap. Example: 018f3c2a-7b4e-7c1d-9a2b-3c4d5e6f7a8b.\nULIDs (01HXYZ3K4M5N6P7Q8R9S0T1V2W) were the alternative.",
    ),
    (
        "relation",
        "Payments service depends on the ledger API",
        "payments -> ledger-api (gRPC, port 50051). The ledger API is the single writer for balances.",
    ),
    (
        "api",
        "POST /v1/sessions returns a session token",
        'The response body is {"token": "<opaque>", "expires_in": 900}. Clients must treat the token as opaque; it is not a JWT.',
    ),
    (
        "api",
        "Webhook signatures use HMAC-SHA256",
        "Header X-Signature: t=1714560000,v1=<hex digest>. Verify with the endpoint's signing secret from the dashboard; never from the payload.",
    ),
    (
        "decision",
        "CI reads tokens from the secret store",
        "token: ${{ secrets.RELEASE_TOKEN }}\napi_key: ${{ secrets.OPENAI_API_KEY }}\nNothing is echoed; `set -x` is banned in release jobs.",
    ),
    (
        "fix",
        "Stop logging the Authorization header",
        "The access log printed `Authorization: Bearer <redacted>` correctly but the debug middleware printed it raw. Removed the middleware from prod builds.",
    ),
    (
        "decision",
        "Django settings read from the environment",
        'SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]\nDATABASE_URL = env("DATABASE_URL")\nDEBUG = False in every deployed environment.',
    ),
    (
        "note",
        "Local database URL",
        "postgres://localhost:5432/app_dev works without a password thanks to trust auth in the dev container.",
    ),
    (
        "note",
        "Compose file uses a placeholder password",
        "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-changeme}\nThe default only exists inside the throwaway dev container.",
    ),
    (
        "decision",
        "Redis URL comes from the platform",
        "REDIS_URL=redis://cache.internal:6379/0 is injected by the platform; the instance is private and has no AUTH.",
    ),
    (
        "decision",
        "Mirror repositories over ssh",
        "git@github.com:acme/app.git is mirrored to ssh://git@git.acme.internal:2222/acme/app.git every 5 minutes.",
    ),
    (
        "open",
        "Should the SDK cache tokens on disk?",
        "Pro: fewer logins. Con: a token file on shared CI runners. If yes, 0600 permissions and the OS keychain when there is one.",
    ),
    (
        "open",
        "Which KMS for envelope encryption?",
        "AWS KMS (we are on AWS) or Vault transit (portable). Data keys are AES-256-GCM either way; the key id would be arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab.",
    ),
    (
        "decision",
        "IAM role for the deployer",
        "arn:aws:iam::123456789012:role/github-deployer, assumed through OIDC (token.actions.githubusercontent.com). No long-lived access keys.",
    ),
    (
        "note",
        "Resource ids of the prod VPC",
        "vpc-0a1b2c3d4e5f67890, subnets subnet-0123456789abcdef0 and subnet-0fedcba9876543210, NAT i-0abcd1234efgh5678 (to be replaced by a NAT gateway).",
    ),
    (
        "incident",
        "Pod crashloop after the 2.3 release",
        "api-7f9c8d6b5-x2kq9 and api-7f9c8d6b5-pq8zt crashlooped: the new config key `cache.ttl_seconds` was missing. Rolled back to 2.2.4 at 14:02 UTC.",
    ),
    (
        "decision",
        "CloudFront in front of the static site",
        "Distribution E2QWRUHAPOMQZL, origin access control on the bucket acme-web-prod-7c9e. Cache policy: 1 day for hashed assets.",
    ),
    (
        "note",
        "Stripe object ids are not secrets",
        "cus_NffrFeUfNV2Hib, pi_3MtwBwLkdIwHu7ix28a3tqPa and price_1MoBy5LkdIwHu7ixZhnattbh are safe to log; only sk_live_/rk_live_ keys are secret.",
    ),
    (
        "note",
        "Token shapes we scan for",
        "GitHub tokens start with ghp_, gho_, ghs_; GitLab ones with glpat-; Slack with xoxb- or xoxp-; OpenAI keys with sk-. The pre-commit hook matches `^ghp_[A-Za-z0-9]{36}$` and friends.",
    ),
    (
        "decision",
        "JWT access tokens are signed with ES256",
        'The header is {"alg":"ES256","typ":"JWT","kid":"2024-05"}. Keys rotate monthly; the JWKS endpoint keeps the previous key for a day.',
    ),
    (
        "note",
        "How to read a JWT header",
        'The first part always starts with eyJ because it is base64url of `{"`. Do not paste whole tokens into tickets; the header alone is fine.',
    ),
    (
        "decision",
        "TLS certificates from Let's Encrypt",
        "cert-manager with the ClusterIssuer letsencrypt-prod. The public certificate chain is in the repo for pinning tests:\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ9n8f5a0VbT3aF5Zk8Yp2wW7tGQwCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----",
    ),
    (
        "note",
        "Public key of the release signer",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3H1lVb9kQ2c7p0q5XQ0vXk2r9aZ8\n-----END PUBLIC KEY-----\nVerify releases with cosign verify-blob --key release.pub.",
    ),
    (
        "decision",
        "Sign release tags with the team GPG key",
        "Key 3AA5C34371567BD2 (ed25519), fingerprint 4F3A 9C2B 1D7E 5A60 8B44  3AA5 C343 7156 7BD2. The private part is on two YubiKeys.",
    ),
    (
        "fix",
        "gpg: signing failed in the release job",
        "gpg --list-secret-keys --keyid-format=long showed sec ed25519/3AA5C34371567BD2 but the agent had no pinentry. Set pinentry-mode loopback.",
    ),
    (
        "decision",
        "Package registry auth through the credential helper",
        "git config credential.helper 'cache --timeout=3600'; npm uses `npm login` (writes ~/.npmrc), never a token in package.json.",
    ),
    (
        "test",
        "Property tests for the canonical form",
        "hypothesis draws kind/author/summary/body/parents; the id must match sha256 of the length-prefixed fields. 10,000 examples in the nightly run.",
    ),
    (
        "test",
        "Load test of the search endpoint",
        "k6 run search.js --vus 200 --duration 10m: p50 38 ms, p99 210 ms, 0.02% 5xx. Dataset seed 0x5eed, 1.2M documents.",
    ),
    (
        "milestone",
        "v1.0 released",
        "Tag v1.0.0 at c1d2e3f4a5b6c7d8e9f00112233445566778899a. Changelog in CHANGELOG.md; wheels on PyPI; SBOM attached.",
    ),
    (
        "release",
        "2.4.1: fix for the session fixation bug",
        "CVE-2024-12345 (moderate). Sessions are now regenerated after login. Upgrade path: drop-in.",
    ),
    (
        "debt",
        "The retry helper swallows exceptions",
        "utils/retry.py catches Exception and returns None after 3 tries. Callers then fail with AttributeError far away. Replace with tenacity and explicit exception types.",
    ),
    (
        "requirement",
        "Audit log retention 7 years",
        "Finance requires 7 years for payment events. Cold storage in S3 Glacier Deep Archive, bucket acme-audit-archive, object lock in compliance mode.",
    ),
    (
        "service",
        "Search service",
        "Owns the OpenSearch cluster search-prod (3 masters, 6 data nodes). On-call: #search-oncall. Runbook: docs/runbooks/search.md.",
    ),
    (
        "bootstrap",
        "Acme Shop: the storefront and its back office",
        "Monorepo: apps/web (Next.js), apps/api (FastAPI), infra/ (Terraform). The ledger records why things are the way they are.",
    ),
    (
        "decision",
        "Feature flags in LaunchDarkly",
        "SDK key is injected at deploy as LD_SDK_KEY; the client-side id (5f3e4a2b1c0d9e8f7a6b5c4d) is public by design.",
    ),
    (
        "decision",
        "Sentry for error reporting",
        "The DSN is public by design (it only allows sending events): https://9c1d7e1f0b8a4b2a8c3d4e5f6a7b8c9d@o450000.ingest.sentry.io/5500000. Rate limit 100 events/min.",
    ),
    ("note", "Google Analytics id", "G-7XKQ2Z9M4B is the measurement id for the marketing site; it is public."),
    (
        "decision",
        "Encrypt backups with age",
        "age -r age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p backup.tar > backup.tar.age. The recipient is a public key; the identity file is in Vault.",
    ),
    (
        "decision",
        "Use Terraform remote state in S3 with locking",
        'backend "s3" { bucket = "acme-tfstate" key = "prod/terraform.tfstate" dynamodb_table = "tf-locks" encrypt = true }',
    ),
    (
        "note",
        "Primary keys of the orders table",
        "primary key: (tenant_id, order_id); sort key in DynamoDB: created_at#order_id. Partition key = tenant_id to keep tenants apart.",
    ),
    (
        "note",
        "Cache key design",
        'cache_key = sha256(f"{tenant}:{path}:{version}") — e.g. 5d41402abc4b2a76b9719d911017c592 for the hello page in the old md5 scheme.',
    ),
    (
        "decision",
        "Idempotency keys on payment requests",
        "Idempotency-Key: 6b1a2e1c-3f0e-4b9a-8d7c-2e5f4a3b2c1d per request; retries reuse it. Stored 24 h.",
    ),
    (
        "correction",
        "Database: PostgreSQL 16, not 15",
        "15 lacks the logical replication improvements we need for the read replicas.\naction: correction of the earlier decision",
    ),
    (
        "checkpoint",
        "checkpoint auth: rotate signing keys",
        "thread: auth\ngoal:\n  - rotate the JWT signing key without logging anyone out\ndone:\n  - JWKS serves both keys\nnext:\n  - switch signer to kid 2024-06\nblocked:\n  - waiting for the mobile release 5.2",
    ),
    (
        "checkpoint",
        "checkpoint infra: NAT gateway",
        "thread: infra\nnext:\n  - terraform apply in eu-west-1 (plan 7 to add, 2 to destroy)\ntried:\n  - reuse the old EIP eipalloc-0a1b2c3d4e5f60718: quota error",
    ),
    (
        "decision",
        "Session cookies: HttpOnly, Secure, SameSite=Lax",
        "Set-Cookie: sid=<random 256-bit>; HttpOnly; Secure; SameSite=Lax; Path=/. The value is opaque; the store is Redis.",
    ),
    (
        "fix",
        "CSRF token missing on the legacy form",
        "The template did not include {% csrf_token %}. Added it and a test that posts without it (expects 403).",
    ),
    (
        "note",
        "Base64 of a small config for the k8s Secret",
        "echo -n 'log_level=debug' | base64 gives bG9nX2xldmVsPWRlYnVn, which is not a secret; real values come from sealed-secrets.",
    ),
    (
        "decision",
        "Sealed secrets for Kubernetes",
        "kubeseal encrypts with the controller's public cert; the sealed YAML (encryptedData: AgBy3i4OJSWK+PiTySYZZA==...) is safe in git.",
    ),
    (
        "incident",
        "Leaked token in a public gist",
        "A contractor pasted a CI token into a public gist. GitHub secret scanning revoked it within a minute; we rotated the rest. Post-mortem in docs/incidents/2024-03-11.md.",
    ),
    (
        "decision",
        "MFA required for the admin panel",
        "WebAuthn first, TOTP as fallback. Recovery codes are shown once and stored as argon2 hashes.",
    ),
    (
        "note",
        "TOTP secret length",
        "RFC 6238 recommends 160-bit secrets (32 base32 characters). We generate them server-side and never log them.",
    ),
    (
        "decision",
        "Rate limit logins per account and per IP",
        "10/min per account, 100/min per IP, with exponential backoff. Password reset tokens are single use and expire in 30 minutes.",
    ),
    (
        "fix",
        "Password reset link used the HTTP scheme",
        "The mail template built the link from the request scheme behind the proxy. Now from settings.PUBLIC_URL (https).",
    ),
    (
        "decision",
        "Store only the hash of API keys",
        "We show a key once; the DB keeps sha256(key) and a prefix like ak_live_4f3a for display. Lookups by hash.",
    ),
    (
        "note",
        "Dependency versions",
        "fastapi==0.111.0, pydantic==2.7.1, sqlalchemy==2.0.30, psycopg[binary]==3.1.19; node 20.12.2; terraform 1.8.3.",
    ),
    ("note", "Ports", "api 8000, web 3000, postgres 5432, redis 6379, opensearch 9200, grafana 3001, jaeger 16686."),
    (
        "note",
        "Commit range of the refactor",
        "git log 4e1f0a9c2b7d3e5f6a8b9c0d1e2f3a4b5c6d7e8f..9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b touches 214 files.",
    ),
    (
        "decision",
        "Monorepo tool: none, plain make",
        "Nx and Bazel were evaluated (ADR-0007). make + a 40-line script covers our 6 packages; revisit at 20.",
    ),
    (
        "decision",
        "Logs in JSON with trace ids",
        '{"ts":"2024-05-01T12:00:00Z","level":"info","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}',
    ),
    ("note", "W3C traceparent example", "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    (
        "decision",
        "Kafka topic naming",
        "<domain>.<entity>.<event>.v<n>, e.g. orders.order.created.v1. Schema registry subject = topic-value.",
    ),
    (
        "fix",
        "Consumer group rebalancing storm",
        "session.timeout.ms was 6000 with max.poll.interval.ms 300000 and slow handlers; raised session timeout to 45000 and made handlers async.",
    ),
    (
        "open",
        "Move from REST to gRPC for internal calls?",
        "Latency p99 would drop ~30% by the benchmark in bench/grpc_vs_rest.md; cost is tooling and the browser clients.",
    ),
    (
        "decision",
        "Prefer UTC everywhere",
        "Store timestamptz, render in the user's zone. Cron schedules are in UTC: 0 3 * * * for backups.",
    ),
    (
        "note",
        "Regex for our internal ids",
        "Order ids match ^ord_[0-9A-HJKMNP-TV-Z]{26}$ (a ULID with a prefix); never treat them as secrets.",
    ),
    (
        "note",
        "Summary of the security review",
        "No critical issues. Medium: missing HSTS preload, verbose errors on /debug. Low: cookie without SameSite on the legacy app.",
    ),
    (
        "decision",
        "Content Security Policy",
        "default-src 'self'; script-src 'self' 'nonce-{random}'; object-src 'none'; base-uri 'none'. The nonce is per response.",
    ),
    (
        "fix",
        "Nonce reused across responses",
        "The CSP nonce was generated at import time. Now per request from secrets.token_urlsafe(16).",
    ),
    (
        "note",
        "Python secrets module usage",
        "token = secrets.token_urlsafe(32)  # for invite links\npassword = getpass.getpass()  # for the CLI login",
    ),
    (
        "decision",
        "Invite links expire after 7 days",
        "https://app.acme.test/invite?code=<opaque>&org=42. The code is 32 bytes from a CSPRNG and stored hashed.",
    ),
    (
        "note",
        "Presigned S3 URLs expire in 5 minutes",
        "generate_presigned_url('get_object', Params={...}, ExpiresIn=300). Never log the full URL: its signature grants access.",
    ),
    (
        "decision",
        "Secrets scanning in pre-commit",
        "detect-secrets and gitleaks in pre-commit; baseline in .secrets.baseline reviewed quarterly.",
    ),
    (
        "note",
        "Environment variables the app reads",
        "DATABASE_URL, REDIS_URL, SENTRY_DSN, OPENAI_API_KEY, ANTHROPIC_API_KEY, STRIPE_SECRET_KEY, JWT_PRIVATE_KEY_PATH. All required in prod.",
    ),
    (
        "decision",
        "OpenAI and Anthropic keys per environment",
        "Each environment has its own key with a spend limit; keys are named env-service-date, e.g. prod-summarizer-2024-05.",
    ),
    (
        "decision",
        "Model choice for summaries",
        "claude-3-5-sonnet-20240620 for quality, gpt-4o-mini for bulk. Temperature 0.2. Max tokens 1024.",
    ),
    ("note", "Embedding model", "text-embedding-3-small (1536 dims), cosine similarity, pgvector ivfflat lists=100."),
    (
        "decision",
        "Webhooks retried with backoff",
        "1m, 5m, 30m, 2h, 12h, then dead letter queue orders-webhooks-dlq. Consumers must be idempotent.",
    ),
    (
        "test",
        "Contract tests against the payments sandbox",
        "Pact files in contracts/; the sandbox uses test card 4242 4242 4242 4242, exp 12/34, CVC 123 (Stripe's documented test card).",
    ),
    (
        "incident",
        "Disk full on the build agent",
        "/var/lib/docker filled with dangling images (412 GB). Added `docker system prune -af --filter until=72h` nightly.",
    ),
    (
        "note",
        "Hash of the approved dataset",
        "dataset.parquet sha256 8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92; any change needs a new approval.",
    ),
    (
        "decision",
        "No secrets in LIFELINE.md",
        "The ledger is pushed everywhere and kept forever. Describe where a secret lives (vault path, env var name), never its value.",
    ),
    (
        "note",
        "Vault paths",
        "kv/data/app/prod/db (username, password), kv/data/app/prod/stripe (secret_key), pki/issue/internal for service certs.",
    ),
    (
        "fix",
        "Helm chart printed the DB password in NOTES.txt",
        "NOTES.txt echoed .Values.db.password. Removed; the chart now reads existingSecret only.",
    ),
    (
        "decision",
        "Git LFS for design files",
        "*.fig and *.psd via LFS; pointer files contain oid sha256:4d7a214614ab2935c943f9e0ff69f22eadbb8f32b1258daaa5e2ca24d17e2393 size 12345.",
    ),
    (
        "note",
        "Docker image tags",
        "ghcr.io/acme/api:2.4.1, ghcr.io/acme/api:sha-9fceb02, ghcr.io/acme/api@sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4.",
    ),
    (
        "decision",
        "Semantic versioning with conventional commits",
        "feat: -> minor, fix: -> patch, feat!: -> major. release-please opens the release PR.",
    ),
    (
        "note",
        "Onboarding: how to get credentials",
        "Ask #platform for a Vault role; run `vault login -method=oidc`; then `make secrets` writes .env.local (git-ignored).",
    ),
    (
        "decision",
        "Support TLS 1.2 and 1.3 only",
        "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256. SSL Labs grade A+.",
    ),
    (
        "note",
        "Benchmark of the ledger append",
        "append at 10k entries: 1.0 ms; at 100k: 3.1 ms; cold CLI process 140 ms. Machine: 2 vCPU, NVMe.",
    ),
    (
        "decision",
        "Accessibility: WCAG 2.1 AA",
        "axe-core in CI on the 20 key pages; contrast tokens in the design system (color.text.primary = #1A1A1A on #FFFFFF).",
    ),
    ("note", "Design tokens", "token: color.brand.primary = #4F46E5; token: spacing.4 = 16px; token: radius.md = 8px."),
    (
        "decision",
        "Internationalisation with ICU messages",
        "Messages like {count, plural, one {# item} other {# items}}; translations in locales/*.json; fallback en.",
    ),
    (
        "note",
        "Unicode in summaries",
        "Café, naïve, 東京, Ελληνικά, العربية and emoji 🚀 must render in the context and the projection.",
    ),
    (
        "fix",
        "Timeouts on the PDF export",
        "wkhtmltopdf took 45 s on 300-page reports. Switched to WeasyPrint with streaming: 6 s.",
    ),
    (
        "decision",
        "Use the keyring for the CLI's login",
        "keyring.set_password('acme-cli', user, token) on macOS/Windows; on Linux the Secret Service, else a 0600 file.",
    ),
    (
        "note",
        "Password manager for shared accounts",
        "1Password vault 'Platform' holds the registrar and the DNS provider logins; access reviewed monthly.",
    ),
    (
        "decision",
        "Signed commits required on main",
        "Branch protection: require signed commits; people use SSH signing (gpg.format=ssh, user.signingkey=~/.ssh/id_ed25519.pub).",
    ),
    (
        "note",
        "allowed_signers format",
        'alice@acme.test namespaces="git" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ5ZsjW9pQ2v1Bn0rT3uXy7cF8dG6hK4mL2pN0qR5sT1 alice',
    ),
    (
        "open",
        "Do we need a WAF?",
        "CloudFront + AWS WAF managed rules would block the credential stuffing we saw (12k login attempts from 300 IPs).",
    ),
    (
        "note",
        "The old mail server",
        "smtp.acme.test:587 with STARTTLS; the username is noreply@acme.test and the password is in Vault (kv/data/mail).",
    ),
    (
        "decision",
        "Deprecate API v1 by 2025-06-30",
        "Sunset header on every v1 response; a dashboard of clients still calling v1 (by API key prefix, not the key).",
    ),
    (
        "fix",
        "Off-by-one in pagination",
        'page=2&per_page=100 returned items 101-199; the cursor now encodes the last id: cursor=eyJpZCI6MTAwfQ (base64 of {"id":100}).',
    ),
    (
        "note",
        "Shell history is not a vault",
        "HISTCONTROL=ignorespace; prefix commands that carry a secret with a space. Better: read it from a file descriptor.",
    ),
    (
        "decision",
        "OIDC for AWS from GitHub Actions",
        "permissions: id-token: write; role-to-assume: arn:aws:iam::123456789012:role/gh-deploy; aws-region: eu-west-1. No stored keys.",
    ),
    (
        "note",
        "Checksums of the CLI release",
        "git-lifeline-1.0.0.tar.gz: 0f343b0931126a20f133d67c2b018a3b5e3c0b7b42e5f1c8d9a7b6e5f4d3c2b1\nwheel: 6dcd4ce23d88e2ee9568ba546c007c63d9131c1b",
    ),
    (
        "decision",
        "Use short-lived credentials everywhere",
        "Humans: SSO sessions of 8 h. Machines: workload identity. The only static credential left is the break-glass account, in a safe.",
    ),
    (
        "debt",
        "Hard-coded test fixtures with fake emails",
        "tests/fixtures/users.json has 200 users like user17@example.com with password hashes of 'password123' (argon2). Fine for tests, confusing for scanners.",
    ),
    (
        "note",
        "What a leaked key costs",
        "In 2023 a leaked cloud key cost a peer company $45k in crypto mining within 6 hours. Rotation runbook: docs/runbooks/key-leak.md.",
    ),
    (
        "decision",
        "Log retention 30 days, PII scrubbed",
        "Scrubber masks emails, card numbers (Luhn-checked), and values of fields named password, secret, token, authorization.",
    ),
    (
        "note",
        "Git hashes in merge messages",
        "Merge 7a3d2b1e9f8c into main: lifeline: merge origin/main into main (12 entries from origin, 3 only here).",
    ),
    (
        "note",
        "A long hex from the profiler",
        "flamegraph id 00000000000000000000000000000000deadbeefcafebabe0123456789abcdef from the pyroscope export.",
    ),
    (
        "decision",
        "Throttle the crawler",
        "User-Agent: AcmeBot/1.2 (+https://acme.test/bot); 1 request per second per host; respects robots.txt.",
    ),
    (
        "note",
        "Key-value store naming",
        "keys look like session:{sid}, ratelimit:{ip}:{minute}, lock:{resource}; TTLs 86400, 60, 30.",
    ),
    (
        "test",
        "Fuzzing the parser",
        "atheris on the markdown parser for 10 hours: 3 crashes (all recursion depth), fixed in a1b2c3d and e4f5a6b.",
    ),
    (
        "decision",
        "Secrets in tests come from a fake generator",
        "faker.password(length=16) per test run; nothing static that a scanner would flag or an attacker could reuse.",
    ),
    (
        "note",
        "Screenshot hash for the visual test",
        "baseline/checkout.png perceptual hash f0e0c0c0e0f0f8fc and md5 9e107d9d372bb6826bd81d3542a419d6.",
    ),
    (
        "decision",
        "Email verification codes are 6 digits",
        "Valid for 10 minutes, 5 attempts; code 483920 in the screenshot was from the staging seed.",
    ),
    (
        "note",
        "Base32 of our recovery code alphabet",
        "Crockford base32 (0123456789ABCDEFGHJKMNPQRSTVWXYZ), grouped 4-4-4: K7M2-9QXT-3HVP.",
    ),
    (
        "fix",
        "Windows paths in the build",
        "C:\\Users\\build\\AppData\\Local\\Temp\\pip-build-env-9x2k_1lq broke the cache key; normalised to forward slashes.",
    ),
    (
        "decision",
        "Avoid secrets in URLs",
        "Query strings end up in logs and browser history. Tokens go in the Authorization header, never ?token=.",
    ),
    (
        "note",
        "Client id of the CLI's OAuth app",
        "client_id: Iv1.8a61f9b3a7aba766 (GitHub App, public). The device flow needs no client secret.",
    ),
    (
        "decision",
        "Docs examples use obvious placeholders",
        "Write <YOUR_API_KEY>, sk-..., ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx or $TOKEN in docs, so readers and scanners both see a placeholder.",
    ),
    (
        "note",
        "Password requirements shown to users",
        "At least 12 characters. Example of a strong passphrase: four random words. The form never shows the typed password.",
    ),
    (
        "relation",
        "Web app talks to the API with a session cookie",
        "web -> api over https://api.acme.test; CORS allows https://app.acme.test only; credentials: 'include'.",
    ),
    (
        "decision",
        "Support keyboard shortcuts",
        "g i -> inbox, g s -> settings, ? -> help. Implemented with tinykeys; no conflicts with screen readers in NVDA tests.",
    ),
    (
        "note",
        "AWS account ids",
        "prod 123456789012, staging 210987654321, sandbox 111122223333. Account ids are identifiers, not credentials.",
    ),
    (
        "note",
        "Azure resource id of the key vault",
        "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-prod/providers/Microsoft.KeyVault/vaults/kv-acme-prod",
    ),
    (
        "decision",
        "GCP project ids and service accounts",
        "acme-prod-7f3c, deployer@acme-prod-7f3c.iam.gserviceaccount.com with Workload Identity Federation; no JSON keys downloaded.",
    ),
    (
        "note",
        "An entropy-heavy but public value",
        "The npm package integrity of left-pad 1.3.0 is sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQCU9Jom7YuUmPNfnRfLt8Wg4hRBI7IsWSUFx2x1GCVDNdw== (public).",
    ),
]


def commit_messages() -> list:
    out = subprocess.run(
        ["git", "log", "--all", "--format=%s%x00%b%x1e"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    seen, rows = set(), []
    for rec in out.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        subject, _, body = rec.partition("\x00")
        if subject in seen or subject.startswith("Merge "):
            continue
        seen.add(subject)
        rows.append(("note", subject[:300], body.strip() or subject))
    return rows


def doc_paragraphs() -> list:
    rows = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for para in re.split(r"\n\s*\n", text):
            para = para.strip()
            if len(para) < 120 or para.startswith("|"):
                continue
            first = para.splitlines()[0].lstrip("#*- ").strip()[:80] or path.stem
            rows.append(("note", f"{path.stem}: {first}", para))
    return rows


def seed_fixture_entries() -> list:
    import sys

    sys.path.insert(0, str(ROOT))
    from git_lifeline.core.seed import read_source

    rows, seen = [], set()
    for path in sorted((ROOT / "tests" / "data" / "seed").glob("*.md")):
        try:
            _fmt, records = read_source(path)
        except Exception:  # a fixture that is bad on purpose
            continue
        for r in records:
            if r.summary and r.body and (r.summary, r.body) not in seen:
                seen.add((r.summary, r.body))
                rows.append((r.kind, r.summary[:300], r.body))
    return rows


def main() -> None:
    rows = [dict(kind=k, summary=s, body=b, source="written") for k, s, b in WRITTEN]
    rows += [dict(kind=k, summary=s, body=b, source="commit-message") for k, s, b in commit_messages()]
    rows += [dict(kind=k, summary=s, body=b, source="docs") for k, s, b in doc_paragraphs()]
    rows += [dict(kind=k, summary=s, body=b, source="seed-fixture") for k, s, b in seed_fixture_entries()]
    doc = {
        "about": "Realistic ledger entries that hold no credential (the scanner's false-positive corpus); "
        "built by make_ledger_entries.py.",
        "entries": rows,
    }
    (HERE / "ledger_entries.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    by_source: dict = {}
    for r in rows:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
    print(len(rows), by_source)


if __name__ == "__main__":
    main()
