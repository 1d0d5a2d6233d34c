#!/usr/bin/env bash
# The whole test run: certificates, build, lint, then every Jest suite (unit, service, e2e) with
# coverage thresholds. Real servers the tests need (InfluxDB, docker-compose) are installed and
# started by scripts/test-infra.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - start ))s)"; }

step "certificates"
bash scripts/gen-certs.sh
step "build (tsc -b)"
pnpm -s build
step "lint (eslint + prettier)"
pnpm -s lint
step "type-check the tests (tsc -p tsconfig.test.json)"
pnpm -s exec tsc -p tsconfig.test.json
step "test infrastructure"
bash scripts/test-infra.sh
step "tests (jest)"
pnpm -s exec jest --coverage "$@"
step "done"
