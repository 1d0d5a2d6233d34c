#!/usr/bin/env node
// Prints the Secrets that the Kubernetes manifests (deploy/kubernetes) mount, as YAML for
// `kubectl apply -f -`. Nothing secret is in the manifests or in the repository: this script
// makes the Secrets from files you give it.
//
//   node scripts/kubernetes-secrets.mjs [--namespace NS] [--certs DIR] [--clients FILE] | kubectl apply -f -
//
//   --certs DIR      the certificates and keys (default $CERTS_DIR, else ./certs, which
//                    scripts/gen-certs.sh makes: the development set). Read from it:
//                      ca.crt                      the CA the services trust (ca.crt of every TLS Secret)
//                      <service>.crt, <service>.key  the HTTPS certificate of one service, when
//                                                  present; else server.crt, server.key (one
//                                                  certificate naming every Service, as gen-certs.sh makes)
//                      primary.crt, secondary.crt  the JWT certificates of kid 100 and 101
//                      primary.key                 the key the token server signs with (kid 100)
//   --clients FILE   the OAuth clients and their secrets, in the token server's clients.yml form
//                    (default services/token-server/config/clients.yml: the development
//                    clients). Each service's secret.yml gets the secret of the client its
//                    client.yml names (deploy/kubernetes/base/config/<service>/client.yml).
//   --namespace NS   sets metadata.namespace (else kubectl's -n or the context's namespace)
//   INFLUXDB_USER, INFLUXDB_PASS   the InfluxDB admin user and password (default admin/admin,
//                    the development pair; InfluxDB takes them at its first start only)
//
// The Secrets (docs/kubernetes.md says which pod mounts which):
//   <service>-secret   secret.yml of api-a ... api-d and the petstore
//   <service>-tls      kubernetes.io/tls (tls.crt, tls.key, ca.crt) of the five and token-server,
//                      the layout cert-manager writes, so it can manage them instead
//   jwt-certificates   primary.crt, secondary.crt: the certificates that verify the tokens
//   jwt-signing-key    signing.key: the token server's signing key
//   oauth2-clients     clients.yml of the token server
//   influxdb-auth      username, password
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { parse, stringify } = createRequire(path.join(root, 'packages', 'config', 'package.json'))(
  'yaml',
);

const SERVICES = ['api-a', 'api-b', 'api-c', 'api-d', 'petstore'];
const TLS = [...SERVICES, 'token-server'];
const LABELS = { 'app.kubernetes.io/part-of': 'secured-rest-chain' };

function fail(message) {
  console.error(`kubernetes-secrets: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  if (!args[i + 1] || args[i + 1].startsWith('--')) fail(`--${name} needs a value`);
  return args[i + 1];
};
for (const a of args.filter((a) => a.startsWith('--'))) {
  if (!['--namespace', '--certs', '--clients'].includes(a)) fail(`unknown option ${a}`);
}
const certs = path.resolve(option('certs', process.env.CERTS_DIR ?? path.join(root, 'certs')));
const clientsFile = path.resolve(
  option('clients', path.join(root, 'services', 'token-server', 'config', 'clients.yml')),
);
const namespace = option('namespace', undefined);

const read = (file, what) => {
  try {
    return fs.readFileSync(file);
  } catch {
    fail(`${file} (${what}) cannot be read; scripts/gen-certs.sh makes a development set`);
  }
};
const cert = (name, what) => read(path.join(certs, name), what);

let clients;
try {
  clients = parse(fs.readFileSync(clientsFile, 'utf8'))?.clients;
} catch (err) {
  fail(`${clientsFile}: ${err.message}`);
}
if (!clients || typeof clients !== 'object') fail(`${clientsFile}: no clients map`);

const secret = (name, data, type = 'Opaque') => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, ...(namespace ? { namespace } : {}), labels: LABELS },
  type,
  data: Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
});

const out = [];
for (const service of SERVICES) {
  const clientYml = path.join(
    root,
    'deploy',
    'kubernetes',
    'base',
    'config',
    service,
    'client.yml',
  );
  const oauth = parse(fs.readFileSync(clientYml, 'utf8'))?.oauth ?? {};
  const secretOf = (clientId, key) => {
    if (!clientId) return undefined;
    const registration = clients[clientId];
    if (!registration?.secret) fail(`${clientsFile}: no secret for client ${clientId} (${key})`);
    return registration.secret;
  };
  const yml = {
    clientCredentialsClientSecret: secretOf(
      oauth.token?.client_credentials?.client_id,
      `${service} client.yml oauth.token.client_credentials.client_id`,
    ),
    keyClientSecret: secretOf(oauth.key?.client_id, `${service} client.yml oauth.key.client_id`),
  };
  const body = Object.fromEntries(Object.entries(yml).filter(([, v]) => v !== undefined));
  out.push(
    secret(`${service}-secret`, {
      'secret.yml':
        `# Made by scripts/kubernetes-secrets.mjs from ${path.basename(clientsFile)}.\n` +
        stringify(body),
    }),
  );
}
for (const service of TLS) {
  const own = fs.existsSync(path.join(certs, `${service}.crt`));
  const [crt, key] = own ? [`${service}.crt`, `${service}.key`] : ['server.crt', 'server.key'];
  out.push(
    secret(
      `${service}-tls`,
      {
        'tls.crt': cert(crt, `HTTPS certificate of ${service}`),
        'tls.key': cert(key, `HTTPS key of ${service}`),
        'ca.crt': cert('ca.crt', 'the CA the services trust'),
      },
      'kubernetes.io/tls',
    ),
  );
}
out.push(
  secret('jwt-certificates', {
    'primary.crt': cert('primary.crt', 'JWT certificate of kid 100'),
    'secondary.crt': cert('secondary.crt', 'JWT certificate of kid 101'),
  }),
  secret('jwt-signing-key', { 'signing.key': cert('primary.key', 'JWT signing key of kid 100') }),
  secret('oauth2-clients', { 'clients.yml': fs.readFileSync(clientsFile) }),
  secret('influxdb-auth', {
    username: process.env.INFLUXDB_USER ?? 'admin',
    password: process.env.INFLUXDB_PASS ?? 'admin',
  }),
);

process.stdout.write(
  '# Made by scripts/kubernetes-secrets.mjs: apply with kubectl, never commit.\n' +
    out.map((s) => stringify(s)).join('---\n'),
);
