#!/usr/bin/env node
// Writes the services' config files of every tree from one source:
//   node scripts/config-trees.mjs           write them
//   node scripts/config-trees.mjs --check   exit 1, naming each file that differs (pnpm lint)
//
// The same keys live in four trees: the bundled folder of each service (services/<service>/
// config), the compose folders mounted at /config (config/<service>/config), the local run's
// overrides (config/local/<service>, and its mtls/ and dpop/ modes) and the Kubernetes
// ConfigMaps (deploy/kubernetes/base/config/<service>). Kept by hand, twenty copies of a
// default drift apart. So each file has one source, and this script writes the others from it
// with the table of what each tree changes (hosts, certificate paths, switches):
//   - services/api-a/config/{server,client,security,metrics,prometheus}.yml: the bundled files
//     of every service (each service's own serviceId, port, client and scopes from SERVICES);
//   - services/<service>/config/api_<x>.yml: that service's downstream, in every tree;
//   - services/token-server/config/{token-server,clients}.yml: the token server's trees.
// The yaml package's Document API edits the parsed source, so the comments on its keys carry
// over; each written file gets its own header. Not written here: secret.yml (each service's
// development secrets; those of compose and Kubernetes are written by scripts/compose-certs.sh
// and scripts/kubernetes-secrets.mjs and never committed, as are the token server's clients.yml
// there), openapi.yaml and users.yml (one copy each).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { isMap, parseDocument, visit } from 'yaml';
import { writeGenerated } from './lib/generated-files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = 'scripts/config-trees.mjs';
/** The service whose bundled files are the source of every service's. */
const SOURCE = 'api-a';

/**
 * The services of the runtime: how comments name them, their server.yml serviceId and port,
 * the chain service they call (the scopes their client asks for, their api_<x>.yml), and
 * whether they ask for tokens of their own (the petstore only looks keys up).
 */
const SERVICES = {
  'api-a': { title: 'api-a', serviceId: 'com.networknt.apia-1.0.0', port: 7441, calls: 'api-b' },
  'api-b': { title: 'api-b', serviceId: 'com.networknt.apib-1.0.0', port: 7442, calls: 'api-c' },
  'api-c': { title: 'api-c', serviceId: 'com.networknt.apic-1.0.0', port: 7443, calls: 'api-d' },
  'api-d': { title: 'api-d', serviceId: 'com.networknt.apid-1.0.0', port: 7444 },
  petstore: {
    title: 'the petstore',
    serviceId: 'com.networknt.petstore-1.0.0',
    port: 8443,
    keysOnly: true,
  },
};
const SERVICE_FILES = ['server.yml', 'client.yml', 'security.yml', 'metrics.yml', 'prometheus.yml'];

/** The host of each port in compose and Kubernetes (service names); locally, localhost. */
const HOSTS = {
  6882: 'oauth2-token',
  6886: 'oauth2-key',
  ...Object.fromEntries(Object.entries(SERVICES).map(([name, { port }]) => [port, name])),
};

/** How the bundled files name a certificate (relative to the file's folder, or CERTS_DIR). */
const BUNDLED_CERTS = '${CERTS_DIR:../../../certs}/';
/** The same from config/local/mtls/<service> and config/local/dpop/<service>, a level deeper. */
const MODE_CERTS = '${CERTS_DIR:../../../../certs}/';

// ---- the headers of each tree's files (wrapped at 100 columns; `\n` starts a new line)

const COMPOSE = {
  'security.yml': (s) =>
    `Security of ${s.title} in compose: JWT signature and scope verification on. The ` +
    'certificates of kid 100 (primary) and 101 (secondary) are those the token server signs ' +
    'with; an unknown kid is fetched from the key server of client.yml (oauth.key).',
  'client.yml': (s) =>
    s.keysOnly
      ? `HTTP client of ${s.title} in compose: the key server by its compose service name, ` +
        'verified against the development CA (the server certificate names every compose service).'
      : `HTTP client of ${s.title} in compose: every host by its compose service name. The server ` +
        'certificate (scripts/gen-certs.sh) names every compose service, so hostnames are ' +
        'verified against the development CA, the trust store.',
  'server.yml': (s) =>
    `Server of ${s.title} in compose: the folder is mounted at /config, so these relative paths ` +
    'are /config/certs/... in the container (scripts/compose-certs.sh copies the certificates).',
  'metrics.yml': (s) =>
    `Metrics of ${s.title} in compose: counted in light-4j's names and written every minute to ` +
    'the InfluxDB of compose/docker-compose-infra.yml, addressed by its compose service name. ' +
    "The password is that file's development default (admin); if you set INFLUXDB_PASS for " +
    'the infra `up`, write the same here.',
  'prometheus.yml': () =>
    'Prometheus GET /metrics in compose, beside the InfluxDB reporter of metrics.yml; either ' +
    'works without the other.',
  downstream: (s, name) =>
    `Downstream of ${name} in compose: ${s.calls} by its compose service name.`,
  'token-server.yml': () =>
    'The local token and key server in compose. compose/docker-compose-infra.yml runs this ' +
    'image twice with this same folder: as oauth2-token (tokens, port 6882) and as oauth2-key ' +
    '(keys, port 6886), so both sign and serve the same keys. Relative paths are ' +
    '/config/certs/... in the container (scripts/compose-certs.sh copies them). The clients ' +
    'and their secrets are clients.yml here, written by scripts/compose-certs.sh from the ' +
    'development clients of services/token-server/config/clients.yml: the image holds no ' +
    'clients.yml.',
};

const KUBERNETES = {
  'security.yml': (s) =>
    `Security of ${s.title} in Kubernetes: JWT signature and scope verification on. The ` +
    'certificates of kid 100 and 101 come from the Secret jwt-certificates (the token server ' +
    'signs with the key of one of them); an unknown kid is fetched from the key server of ' +
    'client.yml (oauth.key).',
  'client.yml': (s, name) =>
    s.keysOnly
      ? `HTTP client of ${s.title} in Kubernetes: only the key server, for a kid its ` +
        'certificates do not hold; from the environment (ConfigMap chain-environment), verified ' +
        `against the CA of the Secret ${name}-tls. The client secret is secret.yml (Secret ` +
        `${name}-secret).`
      : `HTTP client of ${s.title} in Kubernetes: hosts by their Service names in the ` +
        `namespace, verified against the CA of the Secret ${name}-tls (certs/ca.crt). The token ` +
        'and key servers come from the environment (ConfigMap chain-environment), so an overlay ' +
        'can point at servers outside the cluster without touching this file. The client ' +
        `secret is secret.yml (Secret ${name}-secret).`,
  'server.yml': (s, name) =>
    `Server of ${s.title} in Kubernetes. The pod's /config folder is this ConfigMap with the ` +
    'Secrets projected beside it: certs/server.crt and certs/server.key come from the Secret ' +
    `${name}-tls. The container port, the Service port and httpsPort are the same number (the ` +
    'consistency tests check it). shutdownTimeoutMs: the longest wait for in-flight requests ' +
    "after SIGTERM; the Deployment's preStop delay and terminationGracePeriodSeconds are sized " +
    'from it.',
  'metrics.yml': (s) =>
    `Metrics of ${s.title} in Kubernetes: light-4j's names, written every minute to InfluxDB. ` +
    'The host comes from the environment (ConfigMap chain-environment: the StatefulSet influxdb ' +
    'by default), the user and password from the Secret influxdb-auth: none of them is written ' +
    'here.',
  'prometheus.yml': (s) =>
    `Prometheus GET /metrics of ${s.title} on its HTTPS port, beside the InfluxDB reporter of ` +
    'metrics.yml. The network policies let only api-a and the petstore be reached from outside ' +
    'the namespace: let your Prometheus in with a policy of your own (docs/kubernetes.md, ' +
    '"Metrics").',
  downstream: (s, name) =>
    `Downstream of ${name}: ${s.calls} by its Service name in the namespace.`,
  'token-server.yml': () =>
    'The local token and key server in Kubernetes: one Deployment serving both ports, behind ' +
    'two Services, oauth2-token (6882) and oauth2-key (6886). Its TLS certificate and key are ' +
    'the Secret token-server-tls; the private key that signs the tokens the Secret ' +
    'jwt-signing-key; the certificates served to the services the Secret jwt-certificates; the ' +
    'clients and their secrets clients.yml, the Secret oauth2-clients. Nothing secret is ' +
    'written here. signing.kid names the certificate of jwt-certificates that matches the ' +
    'signing key: change both together (docs/kubernetes.md, "Rotate the signing key and the secrets").',
};

const MTLS = '`pnpm start -- --mtls` (scripts/start.mjs)';
const DPOP = '`pnpm start -- --dpop` (scripts/start.mjs)';
const EXCHANGE = '`pnpm start -- --exchange` (scripts/start.mjs)';
/** What --exchange adds to the file of a mode (`''`: alone, or with --mtls or --dpop). */
const withMode = (mode) => (mode ? ` with --${mode} (the ${mode}/ file with it)` : '');
const LOCAL = {
  'security.yml': () =>
    'Local run (scripts/start.mjs): the bundled security.yml with JWT verification switched on.',
  'mtls/server.yml': (s) =>
    `${MTLS}: the bundled server.yml of ${s.title} with two-way TLS.\nEvery client must present ` +
    'a certificate of the client CA (certs/clients/ca.crt, made by scripts/gen-certs.sh); one ' +
    'without gets a TLS alert and no answer.',
  'mtls/client.yml': (s, name) =>
    `${MTLS}: the bundled client.yml of ${s.title}, presenting its own client certificate ` +
    `(certs/clients/${name}.pem, CN=${name}) on every call it makes` +
    (s.keysOnly
      ? " (the key server's)."
      : ', authenticating with it at the token server (tls_client_auth) and getting its own ' +
        'tokens bound to it (RFC 8705).'),
  'mtls/token-server.yml': () =>
    `${MTLS}: the bundled token-server.yml with client certificates at the token port (mtls), ` +
    'nothing else changed.',
  'mtls/clients.yml': () =>
    `${MTLS}: the bundled clients.yml with the chain services authenticated by their client ` +
    'certificates (certs/clients/<service>.pem, made by scripts/gen-certs.sh) and their tokens ' +
    'bound to them. Their secrets stay for the key server, which authenticates by secret only. ' +
    'The user-facing chain-user is unchanged: its tokens are Bearer tokens. Development ' +
    'secrets only.',
  'dpop/client.yml': (s) =>
    `${DPOP}: the bundled client.yml of ${s.title}, its own tokens bound to its DPoP key (RFC ` +
    '9449: a key made at start, a new proof with every call).',
  'dpop/token-server.yml': () =>
    `${DPOP}: the bundled token-server.yml with DPoP, nothing else changed.`,
  'exchange/client.yml': (s, name, mode) =>
    `${EXCHANGE}${withMode(mode)}: the bundled client.yml of ${s.title}` +
    (s.calls
      ? `, exchanging the token of each request for one for ${s.calls} only (RFC 8693), and`
      : ',') +
    ` accepting only tokens for ${name === SOURCE ? 'the chain' : name} (oauth.key.audience).`,
  'exchange/token-server.yml': (mode) =>
    `${EXCHANGE}${withMode(mode)}: the bundled token-server.yml with the exchange policy of ` +
    'the chain (tokenExchange).',
  'dpop/clients.yml': () =>
    `${DPOP}: the bundled clients.yml with the chain services' tokens DPoP-bound: a token ` +
    'request of theirs without a proof is refused. The user-facing chain-user is unchanged: its ' +
    'tokens are Bearer tokens unless it sends a proof. Development secrets only.',
};

// ---- editing a parsed file

const read = (...parts) => parseDocument(fs.readFileSync(path.join(root, ...parts), 'utf8'));
const TO_STRING = { lineWidth: 0, flowCollectionPadding: false };

/** Every string value through `edit` (certificate paths, URLs). */
function mapStrings(doc, edit) {
  visit(doc, {
    Scalar(key, node) {
      if (key !== 'key' && typeof node.value === 'string') node.value = edit(node.value);
    },
  });
  return doc;
}
const certsAt = (prefix) => (doc) => mapStrings(doc, (v) => v.replaceAll(BUNDLED_CERTS, prefix));
const byServiceNames = (doc) =>
  mapStrings(doc, (v) =>
    v.replace(/^https:\/\/localhost:(\d+)/, (url, port) =>
      HOSTS[port] ? `https://${HOSTS[port]}:${port}` : url,
    ),
  );

/** Changes the value at `at`, which the source must hold (a key renamed there fails here). */
function change(doc, at, value) {
  if (!doc.hasIn(at)) throw new Error(`${SCRIPT}: the source has no ${at.join('.')} to change`);
  doc.setIn(at, value);
}

/** Sets `key` in the map at `at`, right after the key `after`, or at the end without it. */
function insert(doc, at, key, value, after) {
  const map = doc.getIn(at, true);
  if (!isMap(map)) throw new Error(`${SCRIPT}: no map at ${at.join('.')}`);
  const index = map.items.findIndex((pair) => pair.key.value === after);
  const pair = doc.createPair(key, value);
  map.items.splice(index < 0 ? map.items.length : index + 1, 0, pair);
  return pair;
}

/** The comment lines of a header: each line of `text` wrapped at 100 columns. */
function comment(text) {
  const lines = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      if (line && line.length + 1 + word.length > 98) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines.map((l) => ` ${l}`).join('\n');
}

/** The file's text: its header, its keys, and the comment closing the source (if kept). */
async function render(doc, header, { keepTrailing = false } = {}) {
  const first = doc.contents.items[0].key;
  if (header !== undefined) first.commentBefore = comment(header);
  // The yaml package puts an empty line before a document's closing comment: written here.
  const trailing = keepTrailing ? doc.comment : null;
  doc.comment = null;
  let text = doc.toString(TO_STRING);
  if (trailing) text += trailing.replace(/^/gm, '#') + '\n';
  return prettier.format(text, { ...(await prettier.resolveConfig(SCRIPT)), parser: 'yaml' });
}

// ---- the trees

/**
 * security.yml `dpop.origins`: the origins the service is reached at, the only ones a DPoP
 * proof's `htu` may name (a proof made for another service is refused here).
 */
function withOrigins(doc, origins) {
  const pair = insert(doc, [], 'dpop', { origins });
  pair.key.commentBefore = comment(
    'A DPoP proof (RFC 9449) is accepted only for these origins: where clients reach this ' +
      'service. Add the name a proxy or an ingress gives it.',
  );
  return doc;
}

/** The bundled files of every service: the source's, with each service's own values. */
function bundled(name, file) {
  const s = SERVICES[name];
  const doc = read('services', SOURCE, 'config', file);
  if (file === 'server.yml') {
    change(doc, ['serviceId'], s.serviceId);
    change(doc, ['httpsPort'], s.port);
  }
  if (file === 'client.yml') {
    change(doc, ['oauth', 'key', 'client_id'], `${name}-client`);
    if (s.keysOnly) {
      for (const at of [
        ['tls', 'loadKeyStore'],
        ['tls', 'keyStore'],
        ['request'],
        ['oauth', 'token'],
      ])
        doc.deleteIn(at);
    } else {
      change(doc, ['oauth', 'token', 'client_credentials', 'client_id'], `${name}-client`);
      const scope = ['oauth', 'token', 'client_credentials', 'scope'];
      if (s.calls) {
        const x = s.calls.replace('-', '_');
        doc.setIn(scope, doc.createNode([`${x}.r`, `${x}.w`]));
      } else doc.deleteIn(scope);
    }
  }
  return doc;
}

/** The header of a bundled file: the source's, naming the service. */
function bundledHeader(name, file) {
  if (file === 'client.yml' && SERVICES[name].keysOnly)
    return 'HTTP client of the petstore: used only to fetch unknown verification keys.';
  const source = read('services', SOURCE, 'config', file).contents.items[0].key.commentBefore;
  return source
    .split('\n')
    .map((l) => l.slice(1))
    .join(' ')
    .replaceAll(SOURCE, SERVICES[name].title);
}

/** The compose folder's version of a bundled file (mounted at /config, hosts by name). */
function compose(doc, file) {
  byServiceNames(certsAt('certs/')(doc));
  if (file === 'security.yml') change(doc, ['enableVerifyJwt'], true);
  if (file === 'metrics.yml') {
    change(doc, ['enabled'], true);
    change(doc, ['influxdbHost'], 'influxdb');
    change(doc, ['influxdbPass'], 'admin');
  }
  if (file === 'prometheus.yml') {
    change(doc, ['enabled'], true);
    change(doc, ['enableHotspot'], true);
  }
  return doc;
}

/** The Kubernetes ConfigMap's version of a compose file (Secrets, environment, Services). */
function kubernetes(doc, file) {
  if (file === 'client.yml') {
    // No client certificate is projected into the pod (loadKeyStore is false).
    doc.deleteIn(['tls', 'keyStore']);
    if (doc.hasIn(['oauth', 'token']))
      change(doc, ['oauth', 'token', 'server_url'], '${OAUTH_TOKEN_URL:https://oauth2-token:6882}');
    change(doc, ['oauth', 'key', 'server_url'], '${OAUTH_KEY_URL:https://oauth2-key:6886}');
  }
  // Added: how long a pod waits for in-flight requests after SIGTERM (its preStop is sized on it).
  if (file === 'server.yml') doc.setIn(['shutdownTimeoutMs'], 10000);
  if (file === 'metrics.yml') {
    change(doc, ['influxdbHost'], '${INFLUXDB_HOST:influxdb}');
    change(doc, ['influxdbUser'], '${INFLUXDB_USER}');
    change(doc, ['influxdbPass'], '${INFLUXDB_PASS}');
  }
  if (file === 'token-server.yml') change(doc, ['signing', 'keyFile'], 'certs/signing.key');
  return doc;
}

/** config/local/mtls: two-way TLS, each hop's own certificate, its tokens bound to it. */
function mtls(doc, file, name) {
  certsAt(MODE_CERTS)(doc);
  if (file === 'server.yml') {
    doc.setIn(['enableTwoWayTls'], true);
    doc.setIn(['truststoreName'], `${MODE_CERTS}clients/ca.crt`);
  }
  if (file === 'client.yml') {
    doc.setIn(['tls', 'loadKeyStore'], true);
    doc.setIn(['tls', 'keyStore'], `${MODE_CERTS}clients/${name}.pem`);
    const credentials = ['oauth', 'token', 'client_credentials'];
    if (doc.hasIn(credentials)) {
      insert(doc, credentials, 'token_endpoint_auth_method', 'tls_client_auth', 'client_id');
      insert(doc, credentials, 'tokenBinding', 'mtls', 'client_id');
    }
  }
  if (file === 'token-server.yml') {
    const pair = insert(doc, [], 'mtls', { enabled: true, caFile: `${MODE_CERTS}clients/ca.crt` });
    pair.key.commentBefore = comment(
      'RFC 8705: the token port asks every client for a certificate (optional); tls_client_auth ' +
        'clients are authenticated by a certificate of the client CA, and the tokens of clients ' +
        'registered for it are bound to the certificate (cnf.x5t#S256).',
    );
  }
  if (file === 'clients.yml') {
    boundClients(doc, (client, service) => {
      insert(doc, ['clients', client], 'certificateBoundAccessTokens', true, 'secret');
      const dn = `CN=${service},O=secured-rest-chain dev`;
      insert(doc, ['clients', client], 'tlsClientAuthSubjectDn', dn, 'secret');
      insert(doc, ['clients', client], 'tokenEndpointAuthMethod', 'tls_client_auth', 'secret');
    });
  }
  return doc;
}

/** config/local/dpop: each hop's own tokens bound to its DPoP key. */
function dpop(doc, file) {
  certsAt(MODE_CERTS)(doc);
  if (file === 'client.yml') {
    insert(doc, ['oauth', 'token', 'client_credentials'], 'tokenBinding', 'dpop', 'client_id');
  }
  if (file === 'token-server.yml') {
    const pair = insert(doc, [], 'dpop', { enabled: true });
    pair.key.commentBefore =
      ' RFC 9449: a token request with a DPoP proof gets a token bound to the proof' +
      "'s key (cnf.jkt).";
  }
  if (file === 'clients.yml') {
    boundClients(doc, (client) =>
      insert(doc, ['clients', client], 'dpopBoundAccessTokens', true, 'secret'),
    );
  }
  return doc;
}

/** A file of config/local/exchange[/<mode>]: the mode's, its certificates a level deeper. */
function inMode(mode, doc, file, name) {
  if (!mode) return certsAt(MODE_CERTS)(doc);
  const moded = mode === 'mtls' ? mtls(doc, file, name) : dpop(doc, file);
  return mapStrings(moded, (v) => v.replaceAll(MODE_CERTS, '${CERTS_DIR:../../../../../certs}/'));
}

/**
 * config/local/exchange[/<mode>]: each hop exchanges the token it received for one for the next
 * hop only (bound as its own tokens are) and accepts only tokens for itself; the token server's
 * policy lets each hop's client do exactly that.
 */
function exchange(doc, file, name) {
  const hops = Object.entries(SERVICES).filter(([, s]) => s.calls);
  if (file === 'client.yml') {
    const { calls } = SERVICES[name];
    const own = doc.getIn(['oauth', 'token', 'client_credentials']).toJSON();
    if (calls) {
      const { uri, client_id, tokenBinding, token_endpoint_auth_method } = own;
      const scope = [`${calls.replace('-', '_')}.r`];
      const section = { uri, client_id, audience: calls, scope };
      if (tokenBinding) section.tokenBinding = tokenBinding;
      if (token_endpoint_auth_method)
        section.token_endpoint_auth_method = token_endpoint_auth_method;
      const pair = insert(doc, ['oauth', 'token'], 'token_exchange', section, 'client_credentials');
      pair.key.commentBefore = comment(
        `RFC 8693: the token each request brings, exchanged for one for ${calls} only, sent alone ` +
          'in Authorization; cached per token until shortly before it expires.',
      );
    }
    if (name !== SOURCE) {
      change(doc, ['oauth', 'key', 'audience'], name);
      const key = doc.getIn(['oauth', 'key'], true).items.find((p) => p.key.value === 'audience');
      key.key.commentBefore = comment(
        `Only tokens exchanged for ${name}: one taken from another hop's traffic is refused here.`,
      );
    }
  }
  if (file === 'token-server.yml') {
    const policy = Object.fromEntries(
      hops.map(([hop, s]) => [
        `${hop}-client`,
        {
          subjectAudience: [hop === SOURCE ? doc.get('audience') : hop],
          audience: [s.calls],
          scope: [`${s.calls.replace('-', '_')}.r`],
        },
      ]),
    );
    const pair = insert(doc, [], 'tokenExchange', policy);
    pair.key.commentBefore = comment(
      'RFC 8693: which client may exchange a token it was sent (its aud one of subjectAudience) ' +
        "for one for which audience, with which scopes. api-a gets the users' tokens; each later " +
        'hop the token exchanged for it.',
    );
  }
  return doc;
}

/** The token server's clients of a binding mode: the chain services' bound, the petstore's none. */
function boundClients(doc, bind) {
  for (const [name, s] of Object.entries(SERVICES)) {
    const client = `${name}-client`;
    if (s.keysOnly) {
      doc.deleteIn(['clients', client, 'scope']);
      const pair = doc.getIn(['clients'], true).items.find((p) => p.key.value === client);
      pair.key.commentBefore =
        ' The petstore asks for no token of its own (it only looks keys up).';
    } else bind(client, name);
  }
  // The mode changes only the services' clients: no comment on the user-facing one here.
  doc.getIn(['clients'], true).items.find((p) => p.key.value === 'chain-user').key.commentBefore =
    undefined;
}

/** Every generated file: its path from the root and its text. */
async function files() {
  const out = new Map();
  /** Writes `doc` to `file` with its header and where it comes from. */
  const add = async (file, source, doc, header, options) => {
    const note = `Generated by ${SCRIPT} from ${source}: edit that file or the script, not this one.`;
    out.set(path.join(root, file), await render(doc, `${header}\n${note}`, options));
  };
  for (const [name, s] of Object.entries(SERVICES)) {
    for (const file of SERVICE_FILES) {
      const source = `services/${SOURCE}/config/${file}`;
      const own = () => bundled(name, file);
      if (name !== SOURCE) {
        const header = bundledHeader(name, file);
        await add(`services/${name}/config/${file}`, source, own(), header, { keepTrailing: true });
      }
      // The petstore's compose and Kubernetes folders hold no prometheus.yml: its bundled
      // one applies.
      if (file === 'prometheus.yml' && s.keysOnly) continue;
      // By its service name, and on the host (a published port, or a port forward).
      const origins = [`https://${name}:${s.port}`, `https://localhost:${s.port}`];
      const composed = () =>
        file === 'security.yml' ? withOrigins(compose(own(), file), origins) : compose(own(), file);
      await add(`config/${name}/config/${file}`, source, composed(), COMPOSE[file](s, name));
      const inKubernetes = kubernetes(composed(), file);
      await add(
        `deploy/kubernetes/base/config/${name}/${file}`,
        source,
        inKubernetes,
        KUBERNETES[file](s, name),
      );
    }
    const local = bundled(name, 'security.yml');
    change(local, ['enableVerifyJwt'], true);
    withOrigins(local, [`https://localhost:${s.port}`, `https://127.0.0.1:${s.port}`]);
    const security = `services/${SOURCE}/config/security.yml`;
    await add(`config/local/${name}/security.yml`, security, local, LOCAL['security.yml'](s, name));
    for (const file of ['server.yml', 'client.yml']) {
      await add(
        `config/local/mtls/${name}/${file}`,
        `services/${SOURCE}/config/${file}`,
        mtls(bundled(name, file), file, name),
        LOCAL[`mtls/${file}`](s, name),
      );
    }
    if (!s.keysOnly) {
      for (const mode of ['', 'mtls', 'dpop']) {
        await add(
          `config/local/exchange/${mode ? `${mode}/` : ''}${name}/client.yml`,
          `services/${SOURCE}/config/client.yml`,
          exchange(
            inMode(mode, bundled(name, 'client.yml'), 'client.yml', name),
            'client.yml',
            name,
          ),
          LOCAL['exchange/client.yml'](s, name, mode),
        );
      }
      await add(
        `config/local/dpop/${name}/client.yml`,
        `services/${SOURCE}/config/client.yml`,
        dpop(bundled(name, 'client.yml'), 'client.yml'),
        LOCAL['dpop/client.yml'](s, name),
      );
    }
    // The service's downstream (api_b.yml of api-a ...): its own bundled file is the source.
    const folder = path.join('services', name, 'config');
    for (const file of fs
      .readdirSync(path.join(root, folder))
      .filter((f) => /^api_.\.yml$/.test(f))) {
      const source = `${folder}/${file}`;
      const own = () => byServiceNames(read(folder, file));
      await add(`config/${name}/config/${file}`, source, own(), COMPOSE.downstream(s, name));
      const k8s = `deploy/kubernetes/base/config/${name}/${file}`;
      await add(k8s, source, own(), KUBERNETES.downstream(s, name));
    }
  }
  const folder = 'services/token-server/config';
  const tokenServer = (file) => read(folder, file);
  const ts = 'token-server.yml';
  const source = `${folder}/${ts}`;
  await add(
    `config/token-server/config/${ts}`,
    source,
    compose(tokenServer(ts), ts),
    COMPOSE[ts](),
  );
  await add(
    `deploy/kubernetes/base/config/token-server/${ts}`,
    source,
    kubernetes(compose(tokenServer(ts), ts), ts),
    KUBERNETES[ts](),
  );
  for (const file of [ts, 'clients.yml']) {
    const from = `${folder}/${file}`;
    const mtlsFile = `config/local/mtls/token-server/${file}`;
    await add(mtlsFile, from, mtls(tokenServer(file), file), LOCAL[`mtls/${file}`]());
    const dpopFile = `config/local/dpop/token-server/${file}`;
    await add(dpopFile, from, dpop(tokenServer(file), file), LOCAL[`dpop/${file}`]());
  }
  for (const mode of ['', 'mtls', 'dpop']) {
    await add(
      `config/local/exchange/${mode ? `${mode}/` : ''}token-server/${ts}`,
      source,
      exchange(inMode(mode, tokenServer(ts), ts, 'token-server'), ts, 'token-server'),
      LOCAL['exchange/token-server.yml'](mode),
    );
  }
  return out;
}

writeGenerated(await files(), {
  check: process.argv.includes('--check'),
  script: SCRIPT,
  what: 'config files',
  source: 'the source each names in its header, or the table there',
});
