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

# Prometheus (Debian's package: `prometheus` and `promtool`) for test/e2e/prometheus.test.ts,
# which runs promtool on every service's /metrics and starts a server of its own (loopback, a
# free port, its own config and data folder). The package comes with a system service on
# 0.0.0.0:9090: its install starts it through systemd where systemd runs, else through its
# init script unless /usr/sbin/policy-rc.d forbids it (as in container images). One that the
# install started is stopped again; one that ran before is left alone. Recommends (the node
# exporter, another service) are not installed.
prometheus_service_running() {
  if [ -d /run/systemd/system ]; then
    systemctl is-active --quiet prometheus.service 2>/dev/null
  else
    [ -f /run/prometheus/prometheus.pid ] && kill -0 "$(cat /run/prometheus/prometheus.pid)" 2>/dev/null
  fi
}
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  ran_before=0
  if prometheus_service_running; then ran_before=1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  if [ "$ran_before" = 0 ] && prometheus_service_running; then
    echo "test-infra: stopping the prometheus system service its install started"
    if [ -d /run/systemd/system ]; then systemctl stop prometheus.service; else /etc/init.d/prometheus stop; fi
  fi
fi
echo "test-infra: $(prometheus --version 2>&1 | head -n 1)"

# Redis (Debian's redis-server) for the limits and DPoP replay tests that share a store between
# processes: each test starts its own redis-server on a free loopback port with its own folder
# (`--port N --save '' --dir D`). The package comes with a system service on 127.0.0.1:6379;
# one that its install started is stopped again, one that ran before is left alone.
redis_service_running() {
  if [ -d /run/systemd/system ]; then
    systemctl is-active --quiet redis-server.service 2>/dev/null
  else
    [ -f /run/redis/redis-server.pid ] && kill -0 "$(cat /run/redis/redis-server.pid)" 2>/dev/null
  fi
}
if ! command -v redis-server >/dev/null 2>&1; then
  ran_before=0
  if redis_service_running; then ran_before=1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  if [ "$ran_before" = 0 ] && redis_service_running; then
    echo "test-infra: stopping the redis-server system service its install started"
    if [ -d /run/systemd/system ]; then systemctl stop redis-server.service; else /etc/init.d/redis-server stop; fi
  fi
fi
echo "test-infra: $(redis-server --version | head -n 1)"

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
