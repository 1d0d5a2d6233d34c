#!/usr/bin/env bash
# The container test: docs/operations.md "Run with Docker Compose" on a real Docker engine. Uses the
# engine that answers, or starts one (scripts/docker-engine.sh; stopped again at the end only
# if started here), makes sure node:24-slim and influxdb:1.8 exist (scripts/base-images.sh:
# pulled, or stand-ins where Docker Hub cannot be reached), then runs test/containers with
# Vitest: every image built through the compose files, the infrastructure and the chain brought
# up, checked through the published ports, taken down, and the images' layers inspected
# (compose.test.ts); then the rendered local Kubernetes overlay run as its pods would run, on a
# network of its own, with no published port (kubernetes.test.ts: a simulation, not a cluster;
# it needs kubectl, which scripts/test-infra.sh installs).
# It publishes the services' fixed ports (6882, 6886, 7441-7444, 8443, 8086): nothing else
# may use them meanwhile. Extra arguments go to Vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/lib/node-version.cjs # Node 24 or later, else one line and exit 1
start=$(date +%s)
step() { echo "== containers: $* ($(($(date +%s) - start)) s)"; }

step "engine"
# Stopped at the end only when this run started it.
if ! bash scripts/docker-engine.sh status >/dev/null 2>&1; then
  trap 'bash scripts/docker-engine.sh stop' EXIT
fi
bash scripts/docker-engine.sh start
eval "$(bash scripts/docker-engine.sh env)"
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null
fi

step "base images"
bash scripts/base-images.sh

step "build, up, check, down (vitest test/containers)"
pnpm -s exec vitest run --config test/containers/vitest.config.ts "$@"
if [ -f .run/containers/images.md ]; then
  echo "Images (docker image inspect; own layers from docker save):"
  cat .run/containers/images.md
fi
step "done"
