import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { DpopKey, credentialHeaders } from '@chain/oauth-client';
import {
  CERTS,
  EIGHT,
  LETTERS,
  claimsOf,
  configDir,
  startChain,
  startService,
  startTokenServer,
  tokenServerYml,
  type Letter,
  type RunningChain,
  type ServiceProcess,
  type TokenServerProcess,
  CLIENT_CERTS,
  OWN_SCOPES,
  clientCertificate,
  clientDn,
  twoWayTlsServerYml,
} from '@chain/testkit';

// Bound tokens along the chain, over real processes and sockets: every hop obtains its own
// client-credentials token bound to its certificate (RFC 8705) or to its DPoP key (RFC 9449)
// and presents it with its proof; a token lifted from one hop's traffic is refused at the first
// hop and at a middle hop called directly.
//
// The checks of the binding are the services' (@chain/security); the header form of a bound
// X-Scope-Token is `credentialHeaders` of @chain/oauth-client (docs/zero-trust.md: the headers a
// hop sends), which this test uses too.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const CA = fs.readFileSync(path.join(CERTS, 'ca.crt'));
const SECURITY = `enableVerifyJwt: true
enableVerifyScope: true
logJwtToken: false
logClientUserScope: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
`;

interface Answer {
  status?: number;
  headers?: IncomingHttpHeaders;
  body?: { code?: string } & Record<string, unknown>;
  text?: string;
  /** The client's error when there was no answer (a TLS alert). */
  error?: string;
}

type Pem = { key: Buffer; cert: Buffer };

/** One HTTPS request on a fresh connection, with a client certificate when given. */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; cert?: Pem } = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = https.request(
      url,
      {
        method: options.method ?? 'GET',
        ca: CA,
        agent: false,
        headers: options.headers,
        ...options.cert,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: Answer['body'];
          try {
            body = JSON.parse(text) as Answer['body'];
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode, headers: res.headers, body, text });
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(Object.assign(new Error(), { code: 'TIMEOUT' })));
    req.on('error', (err: Error & { code?: string }) => resolve({ error: err.code }));
    req.end(options.body);
  });
}

/** A client-credentials token, authenticated by secret or (no secret) by the certificate. */
async function token(
  ts: TokenServerProcess,
  clientId: string,
  how: { secret?: string; cert?: Pem; dpop?: DpopKey; scope?: string },
): Promise<{ access_token: string; token_type: string }> {
  const endpoint = new URL(`${ts.tokenUrl}/oauth2/token`);
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (how.scope) form.set('scope', how.scope);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (how.secret) {
    headers.Authorization = `Basic ${Buffer.from(`${clientId}:${how.secret}`).toString('base64')}`;
  } else {
    form.set('client_id', clientId);
  }
  if (how.dpop) headers.DPoP = await how.dpop.proof('POST', endpoint);
  const answer = await request(endpoint.href, {
    method: 'POST',
    headers,
    body: form.toString(),
    cert: how.cert,
  });
  if (answer.status !== 200) throw new Error(`token for ${clientId}: ${answer.text}`);
  return answer.body as unknown as { access_token: string; token_type: string };
}

/**
 * client.yml of hop `letter`: its own token bound by `binding`; with mtls it presents its
 * certificate and authenticates with it at the token server (tls_client_auth).
 */
const hopClientYml = (ts: TokenServerProcess, letter: Letter, binding: 'mtls' | 'dpop') => {
  const mtls = binding === 'mtls';
  return `tls:
  trustStore: ${CERTS}/ca.crt
${mtls ? `  loadKeyStore: true\n  keyStore: ${CLIENT_CERTS}/api-${letter}.pem\n` : ''}oauth:
  token:
    server_url: ${ts.tokenUrl}
    client_credentials:
      uri: /oauth2/token
      client_id: api-${letter}-client
      tokenBinding: ${binding}
${mtls ? '      token_endpoint_auth_method: tls_client_auth\n' : ''}      scope: [${OWN_SCOPES[letter].join(', ')}]
  key:
    server_url: ${ts.keyUrl}
    uri: /oauth2/key
    client_id: api-${letter}-client
`;
};

const refusal = (answer: Answer) => ({ status: answer.status, code: answer.body?.code });

describe('every hop on two-way TLS with certificate-bound tokens (RFC 8705)', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  /** An api-d on one-way TLS: it sees no client certificate. */
  let oneWay: ServiceProcess;
  let user: string;
  const url = (port: number) => `https://localhost:${port}/v1/data`;

  beforeAll(async () => {
    const clients = LETTERS.map(
      (l) => `  api-${l}-client:
    secret: api-${l}-secret
    tokenEndpointAuthMethod: tls_client_auth
    tlsClientAuthSubjectDn: ${clientDn(`api-${l}`)}
    certificateBoundAccessTokens: true
    scope: [${OWN_SCOPES[l].join(', ')}]
`,
    ).join('');
    ts = await startTokenServer({
      yml: tokenServerYml(`mtls:\n  enabled: true\n  caFile: ${CLIENT_CERTS}/ca.crt\n`),
      files: {
        'clients.yml': `clients:\n${clients}  chain-user:\n    secret: chain-user-secret\n    scope: [api_a.r]\n  bound-user:\n    secret: bound-user-secret\n    certificateBoundAccessTokens: true\n    scope: [api_a.r]\n`,
      },
    });
    chain = await startChain({
      ts,
      files: (letter) => ({
        'server.yml': twoWayTlsServerYml(letter),
        'security.yml': SECURITY,
        'client.yml': hopClientYml(ts, letter, 'mtls'),
        'secret.yml': `keyClientSecret: api-${letter}-secret\n`,
      }),
    });
    oneWay = await startService('api-d', {
      configDir: configDir({
        'server.yml': `serviceId: com.networknt.apid-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\nshutdownTimeoutMs: 1000\n`,
        'security.yml': SECURITY,
      }),
    });
    user = (await token(ts, 'chain-user', { secret: 'chain-user-secret', scope: 'api_a.r' }))
      .access_token;
  });
  afterAll(async () => {
    await chain?.stop();
    await oneWay?.stop();
    expect(await ts.stop()).toBe(0);
  });

  it('answers the 8 messages: each hop authenticated by its certificate, its token bound to it', async () => {
    const answer = await request(url(chain.services.a.port), {
      headers: { Authorization: `Bearer ${user}` },
      cert: clientCertificate('client'),
    });
    expect([answer.status, answer.body]).toEqual([200, EIGHT]);
    // Each hop asked with tls_client_auth (client_id in the form: no secret in the chain). The
    // token server's log line may come after the answer it logs: wait for each.
    for (const l of ['a', 'b', 'c']) {
      const issued = await ts.waitForLine(
        (line) =>
          line.includes('"msg":"token issued"') && line.includes(`"clientId":"api-${l}-client"`),
      );
      expect(JSON.parse(issued)).toMatchObject({ clientId: `api-${l}-client` });
    }
  });

  it('a caller’s certificate-bound token: accepted at the first hop from its certificate, not passed on (each hop sends its own)', async () => {
    const bound = (
      await token(ts, 'bound-user', {
        secret: 'bound-user-secret',
        scope: 'api_a.r',
        cert: clientCertificate('client'),
      })
    ).access_token;
    const a = url(chain.services.a.port);
    const headers = { Authorization: `Bearer ${bound}` };
    const answer = await request(a, { headers, cert: clientCertificate('client') });
    expect([answer.status, answer.body]).toEqual([200, EIGHT]);
    expect(refusal(await request(a, { headers, cert: clientCertificate('api-a') }))).toEqual({
      status: 401,
      code: 'ERR20012',
    });
  });

  it('a hop token at the first hop: refused from any certificate but its own (which then meets the scope check)', async () => {
    const lifted = (await token(ts, 'api-b-client', { cert: clientCertificate('api-b') }))
      .access_token;
    expect(claimsOf(lifted).cnf).toEqual({ 'x5t#S256': expect.any(String) });
    const a = url(chain.services.a.port);
    const headers = { Authorization: `Bearer ${lifted}` };
    for (const other of ['client', 'api-a', 'api-c']) {
      expect({
        other,
        ...refusal(await request(a, { headers, cert: clientCertificate(other) })),
      }).toEqual({
        other,
        status: 401,
        code: 'ERR20012',
      });
    }
    // Its own certificate: the binding holds, and its scopes (api_c.*) are not api-a's.
    expect(refusal(await request(a, { headers, cert: clientCertificate('api-b') }))).toEqual({
      status: 403,
      code: 'ERR10005',
    });
  });

  it('a hop token lifted from api-b’s traffic, at a middle hop called directly: only from api-b’s certificate', async () => {
    const lifted = (await token(ts, 'api-b-client', { cert: clientCertificate('api-b') }))
      .access_token;
    const headers = credentialHeaders(`Bearer ${user}`, lifted);
    const c = url(chain.services.c.port);
    // api-b's own certificate: the call api-b makes.
    const ok = await request(c, { headers, cert: clientCertificate('api-b') });
    expect([ok.status, ok.body]).toEqual([200, EIGHT.slice(0, 4)]);
    for (const other of ['api-a', 'api-c', 'client']) {
      expect({
        other,
        ...refusal(await request(c, { headers, cert: clientCertificate(other) })),
      }).toEqual({
        other,
        status: 401,
        code: 'ERR20012',
      });
    }
    // Without a certificate there is no connection at all (two-way TLS).
    expect(await request(c, { headers })).toEqual({
      error: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
  });

  it('a hop token in Authorization at the last hop: its own certificate only; a service that sees none refuses it', async () => {
    const lifted = (await token(ts, 'api-c-client', { cert: clientCertificate('api-c') }))
      .access_token;
    const headers = { Authorization: `Bearer ${lifted}` };
    const d = url(chain.services.d.port);
    const ok = await request(d, { headers, cert: clientCertificate('api-c') });
    expect([ok.status, ok.body]).toEqual([200, EIGHT.slice(0, 2)]);
    expect(refusal(await request(d, { headers, cert: clientCertificate('client') }))).toEqual({
      status: 401,
      code: 'ERR20012',
    });
    // api-d on one-way TLS: no certificate to check the binding against.
    expect(
      refusal(await request(url(oneWay.port), { headers, cert: clientCertificate('api-c') })),
    ).toEqual({ status: 401, code: 'ERR20012' });
  });
});

describe('every hop with DPoP-bound tokens (RFC 9449)', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  const url = (port: number) => new URL(`https://localhost:${port}/v1/data`);

  beforeAll(async () => {
    const clients = LETTERS.map(
      (l) => `  api-${l}-client:
    secret: api-${l}-secret
    dpopBoundAccessTokens: true
    scope: [${OWN_SCOPES[l].join(', ')}]
`,
    ).join('');
    ts = await startTokenServer({
      yml: tokenServerYml('dpop:\n  enabled: true\n'),
      files: {
        'clients.yml': `clients:\n${clients}  chain-user:\n    secret: chain-user-secret\n    scope: [api_a.r]\n`,
      },
    });
    chain = await startChain({
      ts,
      files: (letter) => ({
        'security.yml': SECURITY,
        'client.yml': hopClientYml(ts, letter, 'dpop'),
        'secret.yml': `clientCredentialsClientSecret: api-${letter}-secret\nkeyClientSecret: api-${letter}-secret\n`,
      }),
    });
  });
  afterAll(async () => {
    await chain?.stop();
    expect(await ts.stop()).toBe(0);
  });

  it('answers the 8 messages: every hop’s own token DPoP-bound, with a new proof per call', async () => {
    const user = await token(ts, 'chain-user', { secret: 'chain-user-secret', scope: 'api_a.r' });
    expect(user.token_type).toBe('Bearer');
    for (let i = 0; i < 2; i++) {
      const answer = await chain.call('a', { Authorization: `Bearer ${user.access_token}` });
      expect([answer.status, answer.body]).toEqual([200, EIGHT]);
    }
  });

  it('a caller’s DPoP-bound token: accepted at the first hop with its proof, not passed on (each hop sends its own)', async () => {
    const key = new DpopKey();
    const bound = await token(ts, 'chain-user', {
      secret: 'chain-user-secret',
      scope: 'api_a.r',
      dpop: key,
    });
    expect(bound.token_type).toBe('DPoP');
    const a = url(chain.services.a.port);
    const answer = await request(a.href, {
      headers: {
        Authorization: `DPoP ${bound.access_token}`,
        DPoP: await key.proof('GET', a, bound.access_token),
      },
    });
    expect([answer.status, answer.body]).toEqual([200, EIGHT]);
  });

  /** The refusals of a DPoP-bound token in Authorization, each with RFC 9449's challenge. */
  async function refusedInAuthorization(
    target: URL,
    bound: string,
    key: DpopKey,
    withProof: (answer: Answer) => void,
  ) {
    const proof = await key.proof('GET', target, bound);
    const first = await request(target.href, {
      headers: { Authorization: `DPoP ${bound}`, DPoP: proof },
    });
    withProof(first);
    const cases: [string, Record<string, string>, string][] = [
      ['the same proof again', { Authorization: `DPoP ${bound}`, DPoP: proof }, 'ERR20014'],
      ['no proof', { Authorization: `DPoP ${bound}` }, 'ERR20013'],
      [
        'a proof for another URL (htu)',
        {
          Authorization: `DPoP ${bound}`,
          DPoP: await key.proof('GET', new URL('/v2/pet/1', target), bound),
        },
        'ERR20013',
      ],
      [
        'a proof by another key',
        { Authorization: `DPoP ${bound}`, DPoP: await new DpopKey().proof('GET', target, bound) },
        'ERR20012',
      ],
      ['as a Bearer token', { Authorization: `Bearer ${bound}` }, 'ERR20012'],
    ];
    for (const [what, headers, code] of cases) {
      const answer = await request(target.href, { headers });
      expect({ what, ...refusal(answer) }).toEqual({ what, status: 401, code });
      // RFC 9449 7.1: a DPoP challenge with the algorithms, the scheme sent carrying the error.
      const challenge = answer.headers?.['www-authenticate'] ?? '';
      const scheme = headers.Authorization.split(' ')[0];
      expect({ what, challenge }).toEqual({
        what,
        challenge: expect.stringMatching(new RegExp(`^${scheme} [^]*error="invalid_`)),
      });
      expect(challenge).toMatch(/\bDPoP realm="[^"]*"[^]*algs="[^"]*ES256/);
    }
  }

  it('a hop token at the first hop: refused without a fresh proof of its key (with one, it meets the scope check)', async () => {
    const key = new DpopKey();
    const lifted = await token(ts, 'api-b-client', { secret: 'api-b-secret', dpop: key });
    expect(lifted.token_type).toBe('DPoP');
    expect(claimsOf(lifted.access_token).cnf).toEqual({ jkt: await key.thumbprint() });
    await refusedInAuthorization(url(chain.services.a.port), lifted.access_token, key, (answer) =>
      expect(refusal(answer)).toEqual({ status: 403, code: 'ERR10005' }),
    );
  });

  it('a hop token in Authorization at the last hop: 200 with a fresh proof of its key only', async () => {
    const key = new DpopKey();
    const lifted = await token(ts, 'api-c-client', { secret: 'api-c-secret', dpop: key });
    await refusedInAuthorization(url(chain.services.d.port), lifted.access_token, key, (answer) =>
      expect([answer.status, answer.body]).toEqual([200, EIGHT.slice(0, 2)]),
    );
  });

  it('a hop token lifted from api-b’s traffic, at a middle hop called directly: only with a fresh proof of its key', async () => {
    const key = new DpopKey();
    const user = await token(ts, 'chain-user', { secret: 'chain-user-secret', scope: 'api_a.r' });
    const lifted = (await token(ts, 'api-b-client', { secret: 'api-b-secret', dpop: key }))
      .access_token;
    const c = url(chain.services.c.port);
    const caller = `Bearer ${user.access_token}`;
    const proof = await key.proof('GET', c, lifted);
    const ok = await request(c.href, { headers: credentialHeaders(caller, lifted, proof) });
    expect([ok.status, ok.body]).toEqual([200, EIGHT.slice(0, 4)]);
    const proofless = Object.fromEntries(
      Object.entries(credentialHeaders(caller, lifted, proof)).filter(
        ([name]) => name === 'Authorization' || name === 'X-Scope-Token',
      ),
    );
    const cases: [string, Record<string, string>, string][] = [
      ['the same proof again', credentialHeaders(caller, lifted, proof), 'ERR20014'],
      [
        'a proof by another key',
        credentialHeaders(caller, lifted, await new DpopKey().proof('GET', c, lifted)),
        'ERR20012',
      ],
      ['no proof', proofless, 'ERR20013'],
      [
        'a proof for another service (htu)',
        credentialHeaders(
          caller,
          lifted,
          await key.proof('GET', url(chain.services.b.port), lifted),
        ),
        'ERR20013',
      ],
      ['as a Bearer token', credentialHeaders(caller, lifted), 'ERR20012'],
    ];
    for (const [what, headers, code] of cases) {
      expect({ what, ...refusal(await request(c.href, { headers })) }).toEqual({
        what,
        status: 401,
        code,
      });
    }
  });
});
