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

# kubectl, whose kustomize renders the Kubernetes overlays offline for test/kubernetes (no
# cluster is used) and for the container test's simulated run. Debian has two packages named
# for it: kubernetes-client (kubectl 1.20, which embeds kustomize v2.0.3: it reads neither
# `resources` naming a folder, nor `patches`, nor `replicas`), and kubectl (a current kubectl
# with kustomize v5, from the Kubernetes or Google Cloud apt repository where one is set up).
# The check is that it renders the local overlay; kubernetes-client is never the answer.
kustomize_renders() {
  kubectl kustomize deploy/kubernetes/overlays/local 2>/dev/null | grep -q '^kind: Deployment'
}
if ! command -v kubectl >/dev/null 2>&1 || ! kustomize_renders; then
  apt-get update -qq
  if apt-cache policy kubectl 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubectl >/dev/null
  fi
  if ! kustomize_renders; then
    echo "test-infra: no kubectl whose kustomize renders deploy/kubernetes (v4 or later needed;" \
      "found: $(kubectl version --client 2>&1 | head -n 1)). Install the kubectl package from" \
      "the Kubernetes project's apt repository." >&2
    exit 1
  fi
fi
