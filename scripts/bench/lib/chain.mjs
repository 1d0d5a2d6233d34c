// The systems under measurement, started as real processes on loopback with port 0 (the OS
// picks a free port, so the local run on 7441-7444/8443/6882/6886 and parallel tests never
// clash): the bare node:https chain, the token server, and the chain services api-a ... api-d
// (built, with a CONFIG_DIR override folder per service).
import path from 'node:path';
import { clientCredentialsToken } from '../../lib/https-request.cjs';
import { BENCH_DIR, CERTS, configDir, serviceEntry } from './paths.mjs';
import { startProcess, stopAll } from './processes.mjs';

const LETTERS = ['d', 'c', 'b', 'a'];
const NEXT = { a: 'b', b: 'c', c: 'd' };

const url = (port) => `https://localhost:${port}/v1/data`;

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

/** Case 1: four bare node:https hops. */
export function startBareChain({ nodeArgs = [] } = {}) {
  return startHops((letter, downstreamPort) =>
    startProcess(`bare-${letter}`, path.join(BENCH_DIR, 'bare-hop.mjs'), {
      nodeArgs,
      args: [
        '--letter',
        letter.toUpperCase(),
        ...(downstreamPort ? ['--downstream', url(downstreamPort)] : []),
      ],
    }),
  );
}

/** The local token server (services/token-server) with its bundled clients, on free ports. */
export async function startTokenServer() {
  const dir = configDir({
    'token-server.yml': `ip: 127.0.0.1
tokenPort: 0
keyPort: 0
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
signing:
  kid: '100'
  keyFile: ${CERTS}/primary.key
certificates:
  '100': ${CERTS}/primary.crt
  '101': ${CERTS}/secondary.crt
shutdownTimeoutMs: 1000
`,
  });
  const proc = await startProcess('token-server', serviceEntry('token-server'), {
    env: { CONFIG_DIR: dir, CERTS_DIR: CERTS },
  });
  const keyLine = await proc.waitForLine((l) => l.includes('"endpoint":"key"'));
  return {
    ...proc,
    tokenUrl: `https://localhost:${proc.port}`,
    keyUrl: `https://localhost:${JSON.parse(keyLine).port}`,
  };
}

/** A client-credentials token from the token server (light-oauth2 protocol, Basic auth). */
export const fetchToken = clientCredentialsToken;

const serverYml = (letter, framework) => `serviceId: com.networknt.api${letter}-1.0.0
ip: 127.0.0.1
httpsPort: 0
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
framework: ${framework}
`;

/**
 * security.yml per mode: off, or on with (`cache`) or without (`nocache`) the verified-token
 * cache. The audit log is off in every mode: a log line per request would measure pino.
 */
export const securityYml = (mode) =>
  mode === 'off'
    ? 'enableVerifyJwt: false\n'
    : `enableVerifyJwt: true
enableVerifyScope: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
    '101': ${CERTS}/secondary.crt
  clockSkewInSeconds: 60
logJwtToken: false
logClientUserScope: false
enableJwtCache: ${mode === 'cache'}
`;

const clientYml = (letter, tokenServer) => {
  const scope = NEXT[letter] ? `[api_${NEXT[letter]}.r, api_${NEXT[letter]}.w]` : '[]';
  const oauth = tokenServer
    ? `oauth:
  token:
    server_url: ${tokenServer.tokenUrl}
    client_credentials:
      uri: /oauth2/token
      client_id: api-${letter}-client
      scope: ${scope}
  key:
    server_url: ${tokenServer.keyUrl}
    uri: /oauth2/key
    client_id: api-${letter}-client
`
    : '';
  return `tls:
  verifyHostname: true
  loadTrustStore: true
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 3000
${oauth}`;
};

/**
 * The built chain api-a ... api-d. `security`: off | cache | nocache; a token server is needed
 * when security is on (each service fetches its own client-credentials token there).
 * `framework`: the host of the request pipeline (server.yml), native (default) or express.
 */
export function startServiceChain({
  security,
  tokenServer,
  only,
  nodeArgs = [],
  framework = 'native',
}) {
  const startOne = (letter, downstreamPort) => {
    const files = {
      'server.yml': serverYml(letter, framework),
      'security.yml': securityYml(security),
      'client.yml': clientYml(letter, security === 'off' ? undefined : tokenServer),
      'secret.yml': `clientCredentialsClientSecret: api-${letter}-secret\nkeyClientSecret: api-${letter}-secret\n`,
      'metrics.yml': 'enabled: false\n',
    };
    if (NEXT[letter]) {
      files[`api_${letter}.yml`] =
        `api_${NEXT[letter]}_host: https://localhost:${downstreamPort}\napi_${NEXT[letter]}_path: /v1/data\n`;
    }
    return startProcess(`api-${letter}`, serviceEntry(`api-${letter}`), {
      env: { CONFIG_DIR: configDir(files), CERTS_DIR: CERTS },
      nodeArgs,
    });
  };
  if (only) {
    return startOne(only).then((proc) => ({ processes: [proc], url: url(proc.port) }));
  }
  return startHops(startOne);
}
