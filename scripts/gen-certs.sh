#!/usr/bin/env bash
# Generates the development certificates (never committed) into $CERTS_DIR (default ./certs):
#   ca.crt/ca.key              a local CA that every service and client trusts
#   server.crt/server.key      the HTTPS certificate of every service, signed by the CA, whose
#                              names cover localhost, 127.0.0.1, ::1 and every compose service name
#   client.crt/client.key      a client certificate for two-way TLS; client.pem holds both
#   primary.crt/primary.key    JWT signing key and certificate of kid "100"
#   secondary.crt/secondary.key JWT signing key and certificate of kid "101"
#   clients/                   two-way TLS (server.yml enableTwoWayTls, `pnpm start -- --mtls`):
#     ca.crt/ca.key            the client CA, the trust store (truststoreName) of a service that
#                              requires client certificates; it signs client certificates only
#     <name>.crt/.key/.pem     the client certificate of each caller (CN=<name>, clientAuth):
#                              api-a api-b api-c api-d petstore, and `client` for the user's curl;
#                              .pem holds the key and the certificate (client.yml tls.keyStore,
#                              curl --cert)
# Idempotent: an existing, complete set is kept (the client set is made on its own when only it
# is missing). Pass --force to make a new one of both.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${CERTS_DIR:-$root/certs}"
files=(ca.crt ca.key server.crt server.key client.crt client.key client.pem primary.crt primary.key secondary.crt secondary.key)
callers=(api-a api-b api-c api-d petstore client)
client_files=(clients/ca.crt clients/ca.key)
for c in "${callers[@]}"; do client_files+=("clients/$c.crt" "clients/$c.key" "clients/$c.pem"); done

complete() { # file...
  for f in "$@"; do [ -s "$dir/$f" ] || return 1; done
}
force=0
[ "${1:-}" = "--force" ] && force=1
main=1
clients=1
if [ "$force" = 0 ]; then
  complete "${files[@]}" && main=0
  complete "${client_files[@]}" && clients=0
fi
if [ "$main" = 0 ] && [ "$clients" = 0 ]; then
  echo "certificates: up to date in $dir"
  exit 0
fi

mkdir -p "$dir"
chmod 700 "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
days=825
subj="/O=secured-rest-chain dev"

sign() { # name cn extensions [ca]
  local ca="${4:-ca}"
  openssl req -newkey rsa:2048 -nodes -sha256 -subj "$subj/CN=$2" \
    -keyout "$tmp/$1.key" -out "$tmp/$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/$ca.crt" -CAkey "$tmp/$ca.key" -CAcreateserial \
    -days "$days" -sha256 -extfile "$tmp/$1.ext" -out "$tmp/$1.crt" 2>/dev/null
}

if [ "$main" = 1 ]; then
echo "certificates: generating into $dir"
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
  -subj "$subj/CN=secured-rest-chain dev CA" \
  -keyout "$tmp/ca.key" -out "$tmp/ca.crt" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

names="DNS:localhost,IP:127.0.0.1,IP:::1"
for n in api-a api-b api-c api-d petstore oauth2-token oauth2-key influxdb; do names="$names,DNS:$n"; done

sign server localhost "subjectAltName=$names
extendedKeyUsage=serverAuth
keyUsage=critical,digitalSignature,keyEncipherment"
sign client chain-client "extendedKeyUsage=clientAuth
keyUsage=critical,digitalSignature,keyEncipherment"
cat "$tmp/client.key" "$tmp/client.crt" > "$tmp/client.pem"

# JWT signing keys: self-signed certificates, as light-oauth2 ships primary.crt/secondary.crt.
for kid in primary:100 secondary:101; do
  name="${kid%%:*}"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -subj "$subj/CN=jwt signing key ${kid##*:}" \
    -keyout "$tmp/$name.key" -out "$tmp/$name.crt" 2>/dev/null
done

for f in "${files[@]}"; do mv "$tmp/$f" "$dir/$f"; done
chmod 600 "$dir"/*.key "$dir/client.pem"
fi

if [ "$clients" = 1 ]; then
  echo "certificates: generating the client set into $dir/clients"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -subj "$subj/CN=secured-rest-chain dev client CA" \
    -keyout "$tmp/client-ca.key" -out "$tmp/client-ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  mkdir -p "$tmp/clients"
  mv "$tmp/client-ca.crt" "$tmp/clients/ca.crt"
  mv "$tmp/client-ca.key" "$tmp/clients/ca.key"
  for c in "${callers[@]}"; do
    sign "clients/$c" "$c" "extendedKeyUsage=clientAuth
keyUsage=critical,digitalSignature,keyEncipherment" clients/ca
    cat "$tmp/clients/$c.key" "$tmp/clients/$c.crt" > "$tmp/clients/$c.pem"
  done
  mkdir -p "$dir/clients"
  chmod 700 "$dir/clients"
  for f in "${client_files[@]}"; do mv "$tmp/$f" "$dir/$f"; done
  chmod 600 "$dir"/clients/*.key "$dir"/clients/*.pem
fi
echo "certificates: done ($(find "$dir" -type f | wc -l) files)"
