#!/usr/bin/env bash
# A Docker engine for the container tests: the one that already answers, else one of our own.
#
#   scripts/docker-engine.sh start    use the engine that answers ($DOCKER_HOST, the default
#                                     socket, or ours from an earlier start); when none does,
#                                     install Debian's docker.io if dockerd is missing and start
#                                     dockerd with every path under $CHAIN_DOCKER_DIR, recording
#                                     that this script started it
#   scripts/docker-engine.sh env      print `export DOCKER_HOST=...` for the engine in use
#                                     (nothing when it is the default one): eval "$(... env)"
#   scripts/docker-engine.sh stop     stop the engine only if `start` started it; images and the
#                                     build cache stay in $CHAIN_DOCKER_DIR/data for the next run
#   scripts/docker-engine.sh status   say which engine answers and whether we started it
#
# $CHAIN_DOCKER_DIR (default /var/tmp/chain-docker) holds our engine's data/ and exec/ roots,
# docker.sock, dockerd.pid, dockerd.log and `started`, the record that we started it. Starting
# an engine needs root (dockerd); a machine that already runs Docker needs nothing of this.
set -euo pipefail

dir="${CHAIN_DOCKER_DIR:-/var/tmp/chain-docker}"
sock="$dir/docker.sock"
marker="$dir/started"
log() { echo "docker-engine: $*" >&2; }

# True when an engine answers on host $1 ("" = the client's default).
answers() {
  if [ -n "$1" ]; then
    DOCKER_HOST="$1" timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
  else
    (unset DOCKER_HOST; timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1)
  fi
}

# The host of the engine in use: DOCKER_HOST when set, else the default, else ours.
engine_in_use() {
  if [ -n "${DOCKER_HOST:-}" ]; then
    answers "$DOCKER_HOST" && { echo "$DOCKER_HOST"; return 0; }
    return 1
  fi
  if [ -S /var/run/docker.sock ] && answers ""; then echo ""; return 0; fi
  if [ -S "$sock" ] && answers "unix://$sock"; then echo "unix://$sock"; return 0; fi
  return 1
}

ours_running() {
  [ -f "$marker" ] && [ -f "$dir/dockerd.pid" ] && kill -0 "$(cat "$dir/dockerd.pid")" 2>/dev/null
}

install_engine() {
  command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 && return 0
  [ "$(id -u)" -eq 0 ] || { log "dockerd is missing and installing it needs root"; exit 1; }
  log "installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  # The package may start the system service; this script uses an engine of its own.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
    systemctl stop docker docker.socket >/dev/null 2>&1 || true
  fi
}

start() {
  local host
  if host=$(engine_in_use); then
    log "an engine answers${host:+ on $host}: using it"
    return 0
  fi
  if [ -n "${DOCKER_HOST:-}" ]; then
    log "DOCKER_HOST=$DOCKER_HOST does not answer; unset it to let this script start an engine"
    exit 1
  fi
  [ "$(id -u)" -eq 0 ] || { log "no engine answers, and starting dockerd needs root"; exit 1; }
  install_engine
  mkdir -p "$dir/data" "$dir/exec"
  rm -f "$sock" "$marker"
  local started
  started=$(date +%s)
  log "starting dockerd (data in $dir/data, log $dir/dockerd.log)"
  # No --dns here: it would also be the resolver of the builds, which run on the host's network
  # and need the package registry. The container test gives the containers it starts a resolver
  # of their own instead (test/containers/compose.test.ts).
  setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "unix://$sock" \
    --pidfile "$dir/dockerd.pid" </dev/null >"$dir/dockerd.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$marker"
  for _ in $(seq 1 120); do
    if answers "unix://$sock"; then
      # dockerd's own pid file is the record (setsid may have forked).
      [ -s "$dir/dockerd.pid" ] && pid=$(cat "$dir/dockerd.pid") && echo "$pid" >"$marker"
      log "dockerd $pid answers on unix://$sock ($(($(date +%s) - started)) s)"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  log "dockerd did not answer; its log:"
  tail -n 30 "$dir/dockerd.log" >&2
  stop
  exit 1
}

stop() {
  if [ ! -f "$marker" ]; then
    log "not started by this script: left alone"
    return 0
  fi
  local pid
  pid=$(cat "$marker")
  if kill "$pid" 2>/dev/null; then
    log "stopping dockerd $pid"
    # dockerd stops its containers (10 s each at most) and its containerd before it exits.
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      log "dockerd $pid still running after 60 s: killing it"
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  # dockerd leaves mounts under its exec root (the host's network namespace): ours to undo.
  awk -v root="$dir/exec/" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r mount; do umount "$mount" 2>/dev/null || umount -l "$mount" || true; done
  rm -f "$marker" "$sock"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env)
    host=$(engine_in_use) || { log "no engine answers: run '$0 start' first"; exit 1; }
    [ -z "$host" ] || echo "export DOCKER_HOST=$host"
    ;;
  status)
    if host=$(engine_in_use); then
      echo "engine answers on ${host:-the default socket}$(ours_running && echo ', started by this script')"
    else
      echo "no engine answers"
      exit 1
    fi
    ;;
  *) echo "usage: $0 start | stop | env | status" >&2; exit 2 ;;
esac
