import path from 'node:path';
import type { Transport } from '@chain/http';
import { DpopKey, TokenManager } from '@chain/oauth-client';
import { loadServiceConfig } from '@chain/runtime';
import {
  CERTS,
  ROOT,
  EIGHT,
  LETTERS,
  claimsOf,
  httpsRequest as request,
  jsonLines,
  startChain,
  startTokenServer,
  tokenRequestCounts,
  tokenServerYml,
  type Answer,
  type Letter,
  type RunningChain,
  type TokenServerProcess,
  waitFor,
  CLIENT_CERTS,
  OWN_SCOPES,
  clientCertificate,
  clientDn,
  twoWayTlsServerYml,
} from '@chain/testkit';

// RFC 8693 along the chain, over real processes and sockets: each hop exchanges the token it
// received for one for the next hop only (client.yml oauth.token.token_exchange), plain, bound
// to the hop's certificate (RFC 8705) and bound to its DPoP key (RFC 9449). Each hop logs the
// token it verified (logJwtToken), which is how the test sees what travelled between hops.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

type Mode = 'plain' | 'mtls' | 'dpop';
const NEXT: Record<Letter, Letter | undefined> = { a: 'b', b: 'c', c: 'd', d: undefined };
/** The audience each hop accepts: the chain's for api-a (the user's token), its own name after. */
const AUDIENCE: Record<Letter, string> = { a: 'urn:chain:api', b: 'api-b', c: 'api-c', d: 'api-d' };
const SECURITY = `enableVerifyJwt: true
enableVerifyScope: true
logJwtToken: true
logClientUserScope: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
`;
const POLICY = `tokenExchange:
  api-d-client:
    subjectAudience: [urn:chain:api]
    audience: [api-d]
${(['a', 'b', 'c'] as const)
  .map(
    (l) => `  api-${l}-client:
    subjectAudience: [${AUDIENCE[l]}]
    audience: [api-${NEXT[l]}]
    scope: [api_${NEXT[l]}.r]
`,
  )
  .join('')}`;

/** client.yml of a hop: its own token as before, and the exchange for the next hop. */
function hopClientYml(ts: TokenServerProcess, letter: Letter, mode: Mode): string {
  const bound =
    mode === 'plain'
      ? ''
      : `      tokenBinding: ${mode}\n${mode === 'mtls' ? '      token_endpoint_auth_method: tls_client_auth\n' : ''}`;
  const next = NEXT[letter];
  return `tls:
  trustStore: ${CERTS}/ca.crt
${mode === 'mtls' ? `  loadKeyStore: true\n  keyStore: ${CLIENT_CERTS}/api-${letter}.pem\n` : ''}oauth:
  token:
    server_url: ${ts.tokenUrl}
    client_credentials:
      uri: /oauth2/token
      client_id: api-${letter}-client
${bound}      scope: [${OWN_SCOPES[letter].join(', ')}]
${
  next
    ? `    token_exchange:
      client_id: api-${letter}-client
      audience: api-${next}
      scope: [api_${next}.r]
${bound}`
    : ''
}  key:
    server_url: ${ts.keyUrl}
    uri: /oauth2/key
    client_id: api-${letter}-client
    audience: ${AUDIENCE[letter]}
    issuer: https://localhost:6882
`;
}

const refusal = (answer: Answer) => ({
  status: answer.status,
  code: (answer.body as { code?: string } | undefined)?.code,
});

describe.each<Mode>(['plain', 'mtls', 'dpop'])('token exchange at every hop (%s)', (mode) => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  let user: string;
  const url = (letter: Letter) => `https://localhost:${chain.services[letter].port}/v1/data`;
  /** The user's certificate with two-way TLS. */
  const userCert = mode === 'mtls' ? clientCertificate('client') : undefined;
  /** The tokens a hop verified, in the order it logged them, once it logged at least `count`. */
  const received = (letter: Letter, count = 1) =>
    waitFor(
      `api-${letter} logged ${count} verified token(s)`,
      () => {
        const tokens = jsonLines(chain.services[letter])
          .filter((l) => l.msg === 'jwt verified')
          .map((l) => l.jwt as string);
        return Promise.resolve(tokens.length >= count ? tokens : undefined);
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );

  beforeAll(async () => {
    const clients = LETTERS.map((l) => {
      const auth =
        mode === 'mtls'
          ? `    tokenEndpointAuthMethod: tls_client_auth\n    tlsClientAuthSubjectDn: ${clientDn(`api-${l}`)}\n    certificateBoundAccessTokens: true\n`
          : mode === 'dpop'
            ? '    dpopBoundAccessTokens: true\n'
            : '';
      return `  api-${l}-client:\n    secret: api-${l}-secret\n${auth}    scope: [${OWN_SCOPES[l].join(', ')}]\n`;
    }).join('');
    const features =
      mode === 'mtls'
        ? `mtls:\n  enabled: true\n  caFile: ${CLIENT_CERTS}/ca.crt\n`
        : mode === 'dpop'
          ? 'dpop:\n  enabled: true\n'
          : '';
    ts = await startTokenServer({
      yml: tokenServerYml(POLICY + features),
      files: {
        'clients.yml': `clients:\n${clients}  chain-user:\n    secret: chain-user-secret\n    scope: [api_a.r]\n`,
      },
    });
    chain = await startChain({
      ts,
      files: (letter) => ({
        ...(mode === 'mtls' && {
          'server.yml': twoWayTlsServerYml(letter),
        }),
        // api-d takes only the chain's delegation path.
        'security.yml':
          letter === 'd'
            ? `${SECURITY}actorPaths: [api-c-client api-b-client api-a-client]\n`
            : SECURITY,
        'client.yml': hopClientYml(ts, letter, mode),
        'secret.yml': `clientCredentialsClientSecret: api-${letter}-secret\ntokenExchangeClientSecret: api-${letter}-secret\nkeyClientSecret: api-${letter}-secret\n`,
      }),
    });
    const answer = await request(`${ts.tokenUrl}/oauth2/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from('chain-user:chain-user-secret').toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=api_a.r',
    });
    user = (answer.body as { access_token: string }).access_token;
  });
  afterAll(async () => {
    await chain?.stop();
    expect(await ts.stop()).toBe(0);
  });

  it('answers the 8 messages; each hop exchanged the token once (cached for the second call)', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await request(url('a'), {
        headers: { Authorization: `Bearer ${user}` },
        client: userCert,
      });
      expect([answer.status, answer.body]).toEqual([200, EIGHT]);
    }
    expect(await tokenRequestCounts(ts.tokenUrl)).toEqual({
      'chain-user': 1,
      'api-a-client': 1,
      'api-b-client': 1,
      'api-c-client': 1,
    });
  });

  it('api-d received a token for api-d only: the user kept, the act chain naming api-c, api-b, api-a', async () => {
    const [token] = await received('d');
    const claims = claimsOf(token);
    expect(claims).toMatchObject({
      aud: 'api-d',
      sub: 'chain-user',
      client_id: 'api-c-client',
      scope: 'api_d.r',
      act: { sub: 'api-c-client', act: { sub: 'api-b-client', act: { sub: 'api-a-client' } } },
    });
    const binding = claims.cnf;
    if (mode === 'plain') expect(binding).toBeUndefined();
    else expect(Object.keys(binding as object)).toEqual([mode === 'mtls' ? 'x5t#S256' : 'jkt']);
    // Every hop saw one token per call, each for itself: no X-Scope-Token beside it.
    for (const letter of LETTERS) {
      const tokens = await received(letter, 2);
      expect(tokens.map((t) => claimsOf(t).aud)).toEqual([AUDIENCE[letter], AUDIENCE[letter]]);
    }
  });

  it('api-d refuses a token for it whose act chain is not the one security.yml actorPaths names (403 ERR10067)', async () => {
    // api-d-client may exchange the user's token for api-d directly (the policy says so): its
    // token passes every other check at api-d, the delegation path is api-d-client alone.
    const key = mode === 'dpop' ? new DpopKey() : undefined;
    const answer = await exchangeAs('d', user, 'api-d', key);
    expect(answer.status).toBe(200);
    const direct = (answer.body as { access_token: string }).access_token;
    expect(claimsOf(direct)).toMatchObject({ aud: 'api-d', act: { sub: 'api-d-client' } });
    const headers: Record<string, string> = key
      ? { Authorization: `DPoP ${direct}`, DPoP: await key.proof('GET', new URL(url('d')), direct) }
      : { Authorization: `Bearer ${direct}` };
    const refused = await request(url('d'), {
      headers,
      client: mode === 'mtls' ? clientCertificate('api-d') : undefined,
    });
    expect([refused.status, refused.body]).toEqual([
      403,
      {
        statusCode: 403,
        code: 'ERR10067',
        message: 'ACCESS_CONTROL_ERROR',
        description: 'Failed to pass the fine-grained authorization with rule actorPaths.',
      },
    ]);
  });

  it('a token taken from one hop’s traffic is refused at every other hop (401 ERR10000)', async () => {
    // The user's token into api-a (a Bearer token for the chain), and each exchanged one.
    for (const from of LETTERS) {
      const [lifted] = await received(from);
      expect(claimsOf(lifted).aud).toBe(AUDIENCE[from]);
      const dpop = mode === 'dpop' && from !== 'a';
      for (const at of LETTERS.filter((l) => l !== from)) {
        const headers: Record<string, string> = {
          Authorization: `${dpop ? 'DPoP' : 'Bearer'} ${lifted}`,
        };
        if (dpop) headers.DPoP = await new DpopKey().proof('GET', new URL(url(at)), lifted);
        const answer = await request(url(at), { headers, client: userCert });
        expect({ from, at, ...refusal(answer) }).toEqual({
          from,
          at,
          status: 401,
          code: 'ERR10000',
        });
      }
    }
  });

  it(
    mode === 'plain'
      ? 'unbound, a token taken from a hop’s traffic still works at that hop (what binding prevents)'
      : 'bound, a token taken from a hop’s traffic is refused at that hop from any other client (401 ERR20012)',
    async () => {
      const [lifted] = await received('c');
      expect(claimsOf(lifted).aud).toBe('api-c');
      if (mode === 'plain') {
        const answer = await request(url('c'), { headers: { Authorization: `Bearer ${lifted}` } });
        expect([answer.status, answer.body]).toEqual([200, EIGHT.slice(0, 4)]);
        return;
      }
      const headers: Record<string, string> =
        mode === 'dpop'
          ? {
              Authorization: `DPoP ${lifted}`,
              DPoP: await new DpopKey().proof('GET', new URL(url('c')), lifted),
            }
          : { Authorization: `Bearer ${lifted}` };
      for (const other of mode === 'mtls' ? ['client', 'api-a', 'api-c'] : ['client']) {
        const answer = await request(url('c'), {
          headers,
          client: mode === 'mtls' ? clientCertificate(other) : undefined,
        });
        expect({ other, ...refusal(answer) }).toEqual({ other, status: 401, code: 'ERR20012' });
      }
    },
  );

  it('the token server refuses an exchange outside its policy with the RFC 8693 error', async () => {
    const [lifted] = await received('b');
    expect(claimsOf(lifted).aud).toBe('api-b');
    const answer = await exchangeAs('b', lifted, 'api-d');
    expect([answer.status, answer.body]).toEqual([
      400,
      {
        error: 'invalid_target',
        error_description: 'the client may not exchange for this audience',
      },
    ]);
  });

  /** A token exchange by hop `letter`'s client, authenticated as the hop does it in this mode. */
  async function exchangeAs(letter: Letter, subject: string, audience: string, key?: DpopKey) {
    const endpoint = new URL(`${ts.tokenUrl}/oauth2/token`);
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subject,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience,
    });
    const client = `api-${letter}-client`;
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
    };
    if (mode === 'mtls') form.set('client_id', client);
    else
      headers.Authorization = `Basic ${Buffer.from(`${client}:api-${letter}-secret`).toString('base64')}`;
    if (key) headers.DPoP = await key.proof('POST', endpoint);
    return request(endpoint.href, {
      method: 'POST',
      headers,
      body: form.toString(),
      client: mode === 'mtls' ? clientCertificate(`api-${letter}`) : undefined,
    });
  }
});

describe('config/local/exchange[/mtls|/dpop] (pnpm start -- --exchange): the mode’s files with the exchange, nothing else changed', () => {
  it.each(['', 'mtls', 'dpop'].flatMap((mode) => LETTERS.map((l) => [mode, l] as const)))(
    '%s api-%s: client.yml',
    (mode, letter) => {
      const name = `api-${letter}`;
      const bundledDir = path.join(ROOT, 'services', name, 'config');
      const env = { CERTS_DIR: CERTS };
      const local = path.join(ROOT, 'config', 'local');
      const moded = loadServiceConfig({
        bundledDir,
        overrideDir: mode ? path.join(local, mode, name) : '/nonexistent',
        env,
      });
      const exchanging = loadServiceConfig({
        bundledDir,
        overrideDir: path.join(local, 'exchange', mode, name),
        env,
      });
      const { token, key } = moded.client.oauth;
      const next = NEXT[letter];
      const cc = token.client_credentials!;
      expect(exchanging.client).toEqual({
        ...moded.client,
        oauth: {
          ...moded.client.oauth,
          token: {
            ...token,
            ...(next && {
              token_exchange: {
                uri: '/oauth2/token',
                client_id: `${name}-client`,
                audience: `api-${next}`,
                scope: [`api_${next}.r`],
                subjectTokenType: 'urn:ietf:params:oauth:token-type:jwt',
                ...(cc.tokenBinding && { tokenBinding: cc.tokenBinding }),
                ...(cc.token_endpoint_auth_method && {
                  token_endpoint_auth_method: cc.token_endpoint_auth_method,
                }),
              },
            }),
          },
          key: { ...key, audience: [AUDIENCE[letter]] },
        },
      });
      // Its secret is there (bundled secret.yml): the exchange can be asked for.
      const files = { client: exchanging.client, secret: exchanging.secret };
      expect(() => new TokenManager({ ...files, http: {} as Transport })).not.toThrow();
    },
  );
});
