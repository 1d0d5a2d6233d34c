#!/usr/bin/env bash
# The whole test run: certificates, build, lint, every Vitest suite (unit, service, e2e) with
# coverage thresholds, and the container test on a real Docker engine. Real servers
# the tests need (InfluxDB, docker-compose and the Docker engine) are installed and started by
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
step "test infrastructure"
bash scripts/test-infra.sh
# The container test runs beside the build, the lint and the type-check: it builds its images
# from the sources (not from dist/) and then mostly waits on the engine and its containers.
# The Vitest suites wait for it: beside it, a loaded machine made their time-outs, and it
# publishes the chain's fixed ports, which some of them take too.
# CHAIN_SKIP_CONTAINERS=1 leaves it out.
containers_log=.run/containers.log
containers=""
if [ "${CHAIN_SKIP_CONTAINERS:-0}" = 1 ]; then
  step "containers: SKIPPED (CHAIN_SKIP_CONTAINERS=1): the images were not built nor run"
else
  step "containers (scripts/test-containers.sh, in the background; its output: $containers_log)"
  mkdir -p .run
  bash scripts/test-containers.sh >"$containers_log" 2>&1 &
  containers=$!
  # A failed step below waits for it: it stops the engine it started when it ends.
  trap '[ -z "$containers" ] || wait "$containers"' EXIT
fi
step "build (tsc -b, then the services bundled)"
pnpm -s build
step "lint (eslint, prettier, generated files, copies, module cycles)"
pnpm -s lint
step "type-check the tests (tsc -p tsconfig.test.json)"
pnpm -s exec tsc -p tsconfig.test.json
if [ -n "$containers" ]; then
  step "containers: waiting for the container test"
  crc=0
  wait "$containers" || crc=$?
  containers=""
  cat "$containers_log"
  [ "$crc" = 0 ] || { echo "containers: FAILED (exit $crc)"; exit 1; }
fi
step "tests (vitest)"
pnpm -s exec vitest run --coverage "$@"
step "done"
