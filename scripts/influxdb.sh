#!/usr/bin/env bash
# A real InfluxDB 1.x (Debian's `influxdb` package) for tests and local runs, never the system
# service: each instance listens on loopback on ports of its own, keeps its data in a folder of
# its own, and is stopped by whoever started it.
#
#   scripts/influxdb.sh install                      install the package when influxd is missing
#   scripts/influxdb.sh config DIR HTTP_PORT RPC_PORT [AUTH]
#                                                    write DIR/influxdb.conf (AUTH: true|false)
#   scripts/influxdb.sh start DIR HTTP_PORT RPC_PORT start influxd on 127.0.0.1 with data in DIR
#   scripts/influxdb.sh stop DIR                     stop the influxd started with DIR
#
# The end-to-end test (test/e2e/metrics.test.ts) writes its config with `config` (auth on) and
# runs influxd itself.
set -euo pipefail

install() {
  if ! command -v influxd >/dev/null 2>&1; then
    echo "installing Debian's influxdb package"
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq influxdb >/dev/null
  fi
  # The package may start the system service on 8086; the tests want none of it.
  if [ -f /var/run/influxdb/influxd.pid ] && kill -0 "$(cat /var/run/influxdb/influxd.pid)" 2>/dev/null; then
    service influxdb stop >/dev/null 2>&1 || true
  fi
  influxd version
}

write_config() {
  local dir=$1 http_port=$2 rpc_port=$3 auth=${4:-false}
  mkdir -p "$dir/meta" "$dir/data" "$dir/wal"
  cat >"$dir/influxdb.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:${rpc_port}"
[meta]
  dir = "${dir}/meta"
[data]
  dir = "${dir}/data"
  wal-dir = "${dir}/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:${http_port}"
  auth-enabled = ${auth}
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[subscriber]
  enabled = false
[logging]
  level = "warn"
  suppress-logo = true
EOF
}

start() {
  local dir http_port=$2 rpc_port=$3
  dir=$(mkdir -p "$1" && cd "$1" && pwd)
  write_config "$dir" "$http_port" "$rpc_port"
  influxd -config "$dir/influxdb.conf" >"$dir/influxd.log" 2>&1 &
  echo $! >"$dir/influxd.pid"
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "http://127.0.0.1:${http_port}/ping"; then
      echo "influxd $(cat "$dir/influxd.pid") listening on 127.0.0.1:${http_port}, data in ${dir}"
      return 0
    fi
    if ! kill -0 "$(cat "$dir/influxd.pid")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "influxd did not start:" >&2
  cat "$dir/influxd.log" >&2
  stop "$dir"
  return 1
}

stop() {
  local pidfile="$1/influxd.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  install) install ;;
  config)
    [ $# -ge 4 ] || { echo "usage: $0 config DIR HTTP_PORT RPC_PORT [AUTH]" >&2; exit 2; }
    mkdir -p "$2"
    write_config "$(cd "$2" && pwd)" "$3" "$4" "${5:-false}"
    ;;
  start) [ $# -eq 4 ] || { echo "usage: $0 start DIR HTTP_PORT RPC_PORT" >&2; exit 2; }; start "$2" "$3" "$4" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: $0 install | config DIR HTTP_PORT RPC_PORT [AUTH] | start DIR HTTP_PORT RPC_PORT | stop DIR" >&2; exit 2 ;;
esac
