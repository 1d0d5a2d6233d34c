#!/usr/bin/env bash
# The whole test run: certificates, build, lint, every Vitest suite (unit, service, e2e) with
# coverage thresholds, then the container test on a real Docker engine. Real servers the tests
# need (InfluxDB, docker-compose and the Docker engine) are installed and started by
# scripts/test-infra.sh and scripts/test-containers.sh, which stop only what they started.
# CHAIN_SKIP_CONTAINERS=1 leaves the container test out (a machine without Docker or root).
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 or later, else one line and exit 1. Under pnpm it is node_modules/.bin/node where
# `pnpm install` put Node 24 there (Linux x64).
node scripts/lib/node-version.cjs
echo "node $(node --version) ($(command -v node))"
start=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - start ))s)"; }

step "certificates"
bash scripts/gen-certs.sh
step "build (tsc -b)"
pnpm -s build
step "lint (eslint, prettier, generated files, copies, module cycles)"
pnpm -s lint
step "type-check the tests (tsc -p tsconfig.test.json)"
pnpm -s exec tsc -p tsconfig.test.json
step "test infrastructure"
bash scripts/test-infra.sh
step "tests (vitest)"
pnpm -s exec vitest run --coverage "$@"
if [ "${CHAIN_SKIP_CONTAINERS:-0}" = 1 ]; then
  step "containers: SKIPPED (CHAIN_SKIP_CONTAINERS=1): the images were not built nor run"
else
  step "containers (scripts/test-containers.sh)"
  bash scripts/test-containers.sh
fi
step "done"
