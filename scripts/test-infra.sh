#!/usr/bin/env bash
# Installs the real servers and tools the tests need, from Debian's packages, when missing.
# Each block is idempotent; CI runs this on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# InfluxDB 1.x for the metrics end-to-end test: the binary only; the test starts its own influxd
# on loopback with its own ports and data folder, and no system service is left running.
bash scripts/influxdb.sh install

# docker-compose v1 (Debian's package, which brings the docker.io engine): `docker-compose -f F
# config` validates the compose files without an engine; scripts/test-containers.sh runs them
# on one (scripts/docker-engine.sh starts it, scripts/base-images.sh makes the base images).
if ! command -v docker-compose >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y docker-compose
fi
