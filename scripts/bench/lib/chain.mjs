// The systems under measurement, started as real processes on loopback with port 0 (the OS
// picks a free port, so the local run on 7441-7444/8443/6882/6886 and parallel tests never
// clash): the bare node:https chain, the peer (Fastify + fast-jwt + undici), the token server,
// the chain services api-a ... api-d and the petstore (built, with a CONFIG_DIR override folder
// per service).
import fs from 'node:fs';
import path from 'node:path';
import {
  CERTS,
  ROOT,
  configDir,
  jwtSecurityYml,
  serverYml,
  startProcess,
  startService,
  startTokenServer,
  stopAll,
  tokenServerYml,
} from '@chain/testkit';
import { BENCH_DIR } from './paths.mjs';
import { SERVICE_NODE_FLAGS } from '../../lib/service-node-flags.mjs';

const LETTERS = ['d', 'c', 'b', 'a'];
const NEXT = { a: 'b', b: 'c', c: 'd' };

const url = (port) => `https://localhost:${port}/v1/data`;

/** Every process under measurement runs as users run it, with the development certificates. */
const ENV = { NODE_ENV: 'production', CERTS_DIR: CERTS };

/** Starts processes D, C, B, A in that order, each pointed at the one started before it. */
async function startHops(startHop) {
  const started = [];
  try {
    let downstreamPort;
    for (const letter of LETTERS) {
      const proc = await startHop(letter, downstreamPort);
      started.push(proc);
      downstreamPort = proc.port;
    }
  } catch (err) {
    await stopAll(started);
    throw err;
  }
  const entry = url(started[started.length - 1].port);
  return { processes: started.reverse(), url: entry };
}

/** The bare chain: four hops of node:https alone. */
export function startBareChain({ nodeArgs = [] } = {}) {
  return startHops((letter, downstreamPort) =>
    startProcess(`bare-${letter}`, path.join(BENCH_DIR, 'bare-hop.mjs'), {
      nodeArgs,
      env: ENV,
      args: [
        '--letter',
        letter.toUpperCase(),
        ...(downstreamPort ? ['--downstream', url(downstreamPort)] : []),
      ],
    }),
  );
}

/**
 * The peer chain: four hops of peer-hop.mjs (Fastify 5, fast-jwt, undici); `h2` between hops.
 * `full`: each hop also writes an audit line per request, counts metrics and carries the trace
 * (peer-hop.mjs --full), its stdout appended to `<logDir>/peer-<letter>.log` as the services'
 * output is (startBenchService).
 */
export function startPeerChain({ tokenServer, h2 = false, full = false, logDir, nodeArgs = [] }) {
  if (full && !logDir) throw new Error('the full peer needs a logDir for its audit lines');
  return startHops((letter, downstreamPort) =>
    startProcess(`peer-${letter}`, path.join(BENCH_DIR, 'peer-hop.mjs'), {
      nodeArgs,
      env: ENV,
      logFile: full ? path.join(logDir, `peer-${letter}.log`) : undefined,
      args: [
        '--letter',
        letter.toUpperCase(),
        '--token-url',
        tokenServer.tokenUrl,
        ...(h2 ? ['--h2'] : []),
        ...(full ? ['--full'] : []),
        ...(downstreamPort ? ['--downstream', url(downstreamPort)] : []),
      ],
    }),
  );
}

/** server.yml of a bench service: its id, loopback, a free port, the host, extra keys. */
const benchServerYml = (serviceId, { framework = 'native', ...extra } = {}) =>
  serverYml(serviceId, { framework, ...extra });

/**
 * security.yml per mode: off, or on with (`cache`) or without (`nocache`) the verified-token
 * cache, the audit line off (the cases that isolate verification); `shipped` is the file the
 * local run ships (config/local/<service>/security.yml: cache on, an audit line per verified
 * request), `shipped-no-audit` the same file with the audit line off.
 */
export const securityYml = (mode, service = 'api-a') => {
  if (mode === 'off') return 'enableVerifyJwt: false\n';
  if (mode === 'shipped' || mode === 'shipped-no-audit') {
    const shipped = fs.readFileSync(
      path.join(ROOT, 'config', 'local', service, 'security.yml'),
      'utf8',
    );
    if (mode === 'shipped') return shipped;
    const off = shipped.replace(/^logClientUserScope: true$/m, 'logClientUserScope: false');
    if (off === shipped) {
      throw new Error(
        `config/local/${service}/security.yml no longer sets logClientUserScope: true`,
      );
    }
    return off;
  }
  return jwtSecurityYml({
    scope: true,
    clockSkewInSeconds: 60,
    keys: { logJwtToken: false, logClientUserScope: false, enableJwtCache: mode === 'cache' },
  });
};

/**
 * The shipped metrics: the compose folder's metrics.yml (on, every minute) pointed at the
 * bench's InfluxDB (@chain/testkit's: auth on, its credentials), and its prometheus.yml (GET /metrics with the process metrics) when it ships one.
 */
function shippedMetrics(service, influx) {
  const folder = path.join(ROOT, 'config', service, 'config');
  const metrics = fs
    .readFileSync(path.join(folder, 'metrics.yml'), 'utf8')
    .replace(/^influxdbHost: .*$/m, 'influxdbHost: 127.0.0.1')
    .replace(/^influxdbPort: .*$/m, `influxdbPort: ${influx.port}`)
    .replace(/^influxdbUser: .*$/m, `influxdbUser: ${influx.user}`)
    .replace(/^influxdbPass: .*$/m, `influxdbPass: ${influx.password}`);
  if (!metrics.includes(`influxdbPort: ${influx.port}`)) {
    throw new Error(
      `config/${service}/config/metrics.yml has no influxdbPort to point at the bench's InfluxDB`,
    );
  }
  const files = { 'metrics.yml': metrics };
  const prometheus = path.join(folder, 'prometheus.yml');
  if (fs.existsSync(prometheus)) files['prometheus.yml'] = fs.readFileSync(prometheus, 'utf8');
  return files;
}

/** The client certificates of `pnpm start -- --mtls` (scripts/gen-certs.sh: certs/clients). */
const CLIENT_CERTS = path.join(CERTS, 'clients');

/** server.yml keys of a hop that requires a client certificate the client CA issued. */
const TWO_WAY_TLS = { enableTwoWayTls: true, truststoreName: path.join(CLIENT_CERTS, 'ca.crt') };

/** The certificate the load generator presents to a chain on two-way TLS. */
export const LOAD_CLIENT = {
  cert: path.join(CLIENT_CERTS, 'client.crt'),
  key: path.join(CLIENT_CERTS, 'client.key'),
};

/**
 * The token server of `pnpm start -- --mtls` (ports 0): mtls on with the client CA, the clients
 * of config/local/mtls/token-server/clients.yml (tls_client_auth, certificate-bound tokens).
 */
export const startMtlsTokenServer = () =>
  startTokenServer({
    yml: tokenServerYml(`mtls:\n  enabled: true\n  caFile: ${CLIENT_CERTS}/ca.crt\n`),
    files: {
      'clients.yml': fs.readFileSync(
        path.join(ROOT, 'config', 'local', 'mtls', 'token-server', 'clients.yml'),
        'utf8',
      ),
    },
  });

/**
 * The token server of `pnpm start` with the exchange policy of `pnpm start -- --exchange`
 * (tokenExchange of config/local/exchange/token-server/token-server.yml): the bench's one.
 */
export const startBenchTokenServer = () => {
  const file = path.join(ROOT, 'config', 'local', 'exchange', 'token-server', 'token-server.yml');
  const text = fs.readFileSync(file, 'utf8');
  return startTokenServer({ yml: tokenServerYml(text.slice(text.indexOf('\ntokenExchange:'))) });
};

/** As config/local/exchange: the token of each request exchanged for the next hop only. */
const exchangeYml = (letter) => {
  const next = NEXT[letter];
  if (!next) return '';
  return `    token_exchange:
      client_id: api-${letter}-client
      audience: api-${next}
      scope: [api_${next}.r]
`;
};

const clientYml = (letter, tokenServer, request = {}, mtls = false, exchange = false) => {
  const scope = NEXT[letter] ? `[api_${NEXT[letter]}.r, api_${NEXT[letter]}.w]` : '[]';
  // As config/local/mtls: the hop presents its certificate, authenticates with it at the token
  // server (tls_client_auth) and gets tokens bound to it.
  const binding = mtls
    ? '      tokenBinding: mtls\n      token_endpoint_auth_method: tls_client_auth\n'
    : '';
  const oauth = tokenServer
    ? `oauth:
  token:
    server_url: ${tokenServer.tokenUrl}
    client_credentials:
      uri: /oauth2/token
      client_id: ${letter === 'petstore' ? 'petstore' : `api-${letter}`}-client
${binding}      scope: ${scope}
${exchange ? exchangeYml(letter) : ''}  key:
    server_url: ${tokenServer.keyUrl}
    uri: /oauth2/key
    client_id: ${letter === 'petstore' ? 'petstore' : `api-${letter}`}-client
    audience: ${exchange && letter !== 'a' ? `api-${letter}` : 'urn:chain:api'}
    issuer: https://localhost:6882
`
    : '';
  return `tls:
  verifyHostname: true
  loadTrustStore: true
  trustStore: ${CERTS}/ca.crt
${mtls ? `  loadKeyStore: true\n  keyStore: ${CLIENT_CERTS}/api-${letter}.pem\n` : ''}request:
  timeout: 3000
${Object.entries(request)
  .map(([k, v]) => `  ${k}: ${v}\n`)
  .join('')}${oauth}`;
};

/**
 * Starts one built service with its override folder, as users run it. `logDir`: its stdout (the
 * JSON log) is also appended to `<logDir>/<name>.log` as `pnpm start` does (through the runner's
 * pipe). `script`: another entry than the service's own (a process named for its case).
 */
export function startBenchService(name, files, { nodeArgs = [], logDir, root, node, script } = {}) {
  return startService(name, {
    configDir: configDir(files),
    env: ENV,
    nodeArgs,
    logFile: logDir ? path.join(logDir, `${name}.log`) : undefined,
    root,
    node,
    script,
    // A chain comparison starts every system at once on a small machine.
    timeoutMs: 20000,
  });
}

/**
 * The built chain api-a ... api-d.
 * - `security`: off | cache | nocache | shipped | shipped-no-audit (securityYml); a token server
 *   is needed when security is on (each service fetches its own client-credentials token there).
 * - `influx`: metrics on as shipped (metrics.yml + prometheus.yml of config/<service>/config),
 *   reporting to this InfluxDB; without it metrics are off.
 * - `logDir`: every service's log appended to a file there, as `pnpm start` writes them.
 * - `server`: extra server.yml keys (framework, enableHttp2, workers); `request`: extra
 *   client.yml `request` keys (enableHttp2).
 * - `root`: the built services of another checkout (the bench's `--base`), run with the same
 *   configuration as this one's; `node`: the node binary they run on (`--base-node`).
 * - `mtls`: every hop on two-way TLS with certificate-bound tokens, as `pnpm start -- --mtls`
 *   (the token server must be one with mtls enabled and config/local/mtls's clients).
 * - `exchange`: each hop exchanges the token it received for one for the next hop only, as
 *   `pnpm start -- --exchange` (the token server must have its policy: startBenchTokenServer).
 * - `entryFiles`: more config files of api-a, the entry hop (limit.yml).
 */
export function startServiceChain({
  security,
  tokenServer,
  only,
  nodeArgs = [],
  influx,
  logDir,
  server = {},
  request = {},
  root,
  node,
  mtls = false,
  exchange = false,
  entryFiles = {},
}) {
  const startOne = (letter, downstreamPort) => {
    const name = `api-${letter}`;
    const files = {
      'server.yml': benchServerYml(`com.networknt.api${letter}-1.0.0`, {
        ...server,
        ...(mtls ? TWO_WAY_TLS : {}),
      }),
      'security.yml': securityYml(security, name),
      'client.yml': clientYml(
        letter,
        security === 'off' ? undefined : tokenServer,
        request,
        mtls,
        exchange,
      ),
      'secret.yml': ['clientCredentials', 'tokenExchange', 'key']
        .map((k) => `${k}ClientSecret: api-${letter}-secret\n`)
        .join(''),
      ...(influx ? shippedMetrics(name, influx) : { 'metrics.yml': 'enabled: false\n' }),
      ...(letter === 'a' ? entryFiles : {}),
    };
    if (NEXT[letter]) {
      files[`api_${letter}.yml`] =
        `api_${NEXT[letter]}_host: https://localhost:${downstreamPort}\napi_${NEXT[letter]}_path: /v1/data\n`;
    }
    return startBenchService(name, files, {
      nodeArgs: [...SERVICE_NODE_FLAGS, ...nodeArgs],
      logDir,
      root,
      node,
    });
  };
  if (only) {
    return startOne(only).then((proc) => ({ processes: [proc], url: url(proc.port) }));
  }
  return startHops(startOne);
}

/** Waits until the log files of stopped services hold everything they wrote. */
export async function closeLogs(processes) {
  await Promise.all(processes.map((p) => p.logClosed));
}
