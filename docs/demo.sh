#!/usr/bin/env bash
# A real ledger session in a fresh repository: the README's first command runs this.
set -euo pipefail
repo=$(mktemp -d "${TMPDIR:-/tmp}/lifeline-demo.XXXXXX")
cd "$repo"
git init -q
git config user.name >/dev/null || git config user.name "Demo User"
git config user.email >/dev/null || git config user.email "demo@example.com"
echo "== a fresh repository: $repo"
git lifeline init
git lifeline log --kind bootstrap --summary "Acme billing API" \
  --body "Multi-tenant billing for Acme's SaaS products; invoices must be auditable for 7 years."
mongo=$(git lifeline log --json --kind decision --summary "Database: MongoDB" \
  --body "Flexible schema while the invoice model settles." | python3 -c 'import json,sys; print(json.load(sys.stdin)["entry"]["id"])')
git lifeline log --kind correction --parents "${mongo:0:8}" --summary "Database: PostgreSQL" \
  --body "Auditors require ACID transactions across invoices and payments; replaces MongoDB."
git lifeline log --kind open --summary "Queue: SQS or RabbitMQ?" --body "Decide after the load test in staging."
echo; echo "== git lifeline context (what a fresh AI reads)"
git lifeline context
echo; echo "== git lifeline verify"
git lifeline verify
echo; echo "== the ledger is plain git history"
git log --oneline refs/lifeline/main
