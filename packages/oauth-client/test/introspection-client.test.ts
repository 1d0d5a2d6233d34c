import type http from 'node:http';
import util from 'node:util';
import { ConfigError } from '@chain/errors';
import { RefusedIntrospectionClient, type IntrospectionSource } from '@chain/security';
import { freePort } from '@chain/testkit';
import {
  createIntrospectionClient,
  introspectionEndpoint,
  IntrospectionFetchError,
} from '../src/introspection-client.js';
import type { ClientConfig, ClientFiles, SecretConfig } from '../src/client-config.js';
import {
  closeClients,
  httpsServer,
  testClient,
  type SeenRequest,
  type TestServer,
} from './support/https-server.js';

// The answers of oidc-provider 8.8.1's introspection endpoint (lib/actions/introspection.js), as
// the local token server gives them (services/token-server/test/introspection.test.ts checks the
// real process): 200 `application/json; charset=utf-8` with `Cache-Control: no-store`, an active
// answer's members, `{"active":false}`; 401 invalid_client with a Basic challenge; 400
// invalid_request.
const ISSUER = 'https://localhost:6882';
const ACTIVE = {
  active: true,
  client_id: 'chain-opaque',
  exp: 1_700_000_600,
  iat: 1_700_000_000,
  iss: ISSUER,
  aud: 'urn:chain:api',
  scope: 'api_a.r read:pets',
  token_type: 'Bearer',
};
const TOKEN = 'Qg8nGxRyQAMpmDE2yCqfRgkovDrfxAg1VzM6eUkTLw6';
const SECRET = 'api-a-secret';
const CLIENTS: Record<string, string> = {
  'api-a-client': SECRET,
  'gateway-consumer': 'its-secret',
};

function oidcProviderAnswer(req: SeenRequest, res: http.ServerResponse) {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    });
    res.end(JSON.stringify(body));
  };
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
  if (!basic) {
    json(400, {
      error: 'invalid_request',
      error_description: 'no client authentication mechanism provided',
    });
    return;
  }
  const [id, secret] = Buffer.from(basic[1], 'base64')
    .toString()
    .split(':')
    .map(decodeURIComponent);
  if (CLIENTS[id] !== secret) {
    json(
      401,
      { error: 'invalid_client', error_description: 'client authentication failed' },
      {
        'WWW-Authenticate': `Basic realm="${ISSUER}", error="invalid_client", error_description="client authentication failed"`,
      },
    );
    return;
  }
  const form = new URLSearchParams(req.body);
  if (!form.get('token')) {
    json(400, {
      error: 'invalid_request',
      error_description: "missing required parameter 'token'",
    });
    return;
  }
  // oidc-provider 9 (lib/shared/reject_structured_tokens.js): a JWT is not introspected.
  if (/^eyJ[^.]*\.[^.]*\.[^.]*$/.test(form.get('token')!)) {
    json(400, {
      error: 'unsupported_token_type',
      error_description:
        'Structured JWT Tokens cannot be introspected via the introspection_endpoint',
    });
    return;
  }
  json(200, form.get('token') === TOKEN ? ACTIVE : { active: false });
}

let server: TestServer;
let handler: (req: SeenRequest, res: http.ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((req, res) => handler(req, res));
});
afterAll(() => server.close());
afterEach(closeClients);
beforeEach(() => {
  server.seen.splice(0);
  handler = oidcProviderAnswer;
});

const client = (overrides: { url?: string; secret?: string; timeoutMs?: number } = {}) =>
  createIntrospectionClient({
    endpoint: {
      url: overrides.url ?? `${server.url}/oauth2/introspection`,
      clientId: 'api-a-client',
      clientSecret: overrides.secret ?? SECRET,
    },
    http: testClient(),
    timeoutMs: overrides.timeoutMs ?? 1000,
  });

/** The error, whose message and everything reachable from it hold neither token nor secret. */
async function failure(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  const text = util.inspect(err, { depth: 10, showHidden: true });
  for (const secret of [
    TOKEN,
    SECRET,
    'its-secret',
    Buffer.from(`api-a-client:${SECRET}`).toString('base64'),
  ]) {
    expect(text).not.toContain(secret);
  }
  return err as Error;
}

describe('createIntrospectionClient (RFC 7662, as oidc-provider answers)', () => {
  it('POSTs the token with its hint, as the configured client (Basic), and reads an active answer', async () => {
    await expect(client().introspect(TOKEN)).resolves.toEqual({ active: true, claims: ACTIVE });
    expect(server.seen).toEqual([
      {
        method: 'POST',
        url: '/oauth2/introspection',
        headers: expect.objectContaining({
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`api-a-client:${SECRET}`).toString('base64')}`,
        }),
        body: `token=${TOKEN}&token_type_hint=access_token`,
      },
    ]);
  });

  it('{"active":false} is an answer: not active', async () => {
    await expect(client().introspect('revoked-or-unknown')).resolves.toEqual({ active: false });
  });

  it("oidc-provider 9's 400 unsupported_token_type (a JWT) is an answer: not active (RFC 7662 2.2)", async () => {
    await expect(client().introspect('eyJhbGciOiJub25lIn0.e30.')).resolves.toEqual({
      active: false,
    });
  });

  it("a request's own client asks instead (form-encoded, RFC 6749 2.3.1); refused, it is RefusedIntrospectionClient", async () => {
    const source = client();
    await expect(
      source.introspect(TOKEN, { clientId: 'gateway-consumer', clientSecret: 'its-secret' }),
    ).resolves.toMatchObject({ active: true });
    expect(server.seen[0].headers.authorization).toBe(
      `Basic ${Buffer.from('gateway-consumer:its-secret').toString('base64')}`,
    );
    const refused = await failure(
      source.introspect(TOKEN, { clientId: 'gateway-consumer', clientSecret: 'wrong:secret' }),
    );
    expect(refused).toBeInstanceOf(RefusedIntrospectionClient);
    expect(refused.message).toBe(
      `introspection server ${server.url}/oauth2/introspection refused the client of the request (HTTP 401 invalid_client)`,
    );
    expect(server.seen[1].headers.authorization).toBe(
      `Basic ${Buffer.from('gateway-consumer:wrong%3Asecret').toString('base64')}`,
    );
  });

  it('our own client refused, or any other error answer, is a failure naming the server and the status', async () => {
    const at = `introspection server ${server.url}/oauth2/introspection`;
    const wrong = await failure(client({ secret: 'not-the-secret' }).introspect(TOKEN));
    expect([wrong.name, wrong.message]).toEqual([
      'IntrospectionFetchError',
      `${at} answered HTTP 401 invalid_client`,
    ]);
    for (const [status, body, message] of [
      [500, { error: 'server_error' }, `${at} answered HTTP 500 server_error`],
      [503, '<html>proxy</html>', `${at} answered HTTP 503`],
      [400, { error: 'bad "error" \n' }, `${at} answered HTTP 400`],
    ] as const) {
      handler = (_req, res) => {
        res.writeHead(status);
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      const err = await failure(client().introspect(TOKEN));
      expect([err.constructor, err.message]).toEqual([IntrospectionFetchError, message]);
    }
  });

  it.each([
    ['not JSON', 'active'],
    ['a JSON list', '[{"active":true}]'],
    ['no active member', '{"client_id":"x"}'],
    ['active as text', '{"active":"true"}'],
    ['null', 'null'],
  ])(
    'a 200 that is not an RFC 7662 answer (%s) is a failure, never taken for active',
    async (_what, text) => {
      handler = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(text);
      };
      const err = await failure(client().introspect(TOKEN));
      expect(err.message).toBe(
        `introspection server ${server.url}/oauth2/introspection did not answer an RFC 7662 introspection`,
      );
    },
  );

  it('no answer: unreachable, past request.timeout, or larger than 16 KiB', async () => {
    const port = await freePort();
    const down = await failure(client({ url: `https://localhost:${port}/i` }).introspect(TOKEN));
    expect(down.message).toBe(
      `introspection server https://localhost:${port}/i could not be reached (ECONNREFUSED)`,
    );
    expect((down.cause as { code: string }).code).toBe('network');

    handler = () => undefined; // never answers
    const slow = await failure(client({ timeoutMs: 200 }).introspect(TOKEN));
    expect(slow.message).toBe(
      `introspection server ${server.url}/oauth2/introspection did not answer within 200 ms`,
    );

    handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...ACTIVE, padding: 'x'.repeat(16 * 1024) }));
    };
    const big = await failure(client().introspect(TOKEN));
    expect(big.message).toBe(
      `introspection server ${server.url}/oauth2/introspection answered more than 16384 bytes`,
    );
  });

  it('a kept-alive connection the server reset is asked again once, on a fresh connection', async () => {
    const source: IntrospectionSource = client();
    await source.introspect(TOKEN); // opens a kept-alive connection
    await new Promise((resolve) => setImmediate(resolve)); // back in the pool, idle
    let resets = 0;
    handler = (req, res) => {
      if (resets++ === 0) {
        res.socket?.destroy(); // reset before any byte of the answer
        return;
      }
      oidcProviderAnswer(req, res);
    };
    await expect(source.introspect(TOKEN)).resolves.toMatchObject({ active: true });
    expect(server.seen).toHaveLength(3);
  });
});

describe('introspectionEndpoint (client.yml, secret.yml)', () => {
  const files = (
    oauth: Partial<ClientConfig['oauth']>,
    secret: SecretConfig = {},
  ): ClientFiles => ({
    client: {
      oauth: {
        token: {},
        key: { uri: '/oauth2/key', jwk: false },
        ...oauth,
      },
    } as ClientConfig,
    secret,
    clientFile: '/config/client.yml',
    secretFile: '/config/secret.yml',
  });
  const configError = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const { file, key, reason } = err as ConfigError;
      return { file, key, reason };
    }
    throw new Error('expected a ConfigError');
  };
  const introspection = {
    server_url: 'https://oauth2-token:6882/',
    uri: '/oauth2/introspection',
    client_id: 'api-a-client',
  };

  it('oauth.introspection, with secret.yml introspectionClientSecret (else its client_secret)', () => {
    expect(
      introspectionEndpoint(files({ introspection }, { introspectionClientSecret: 's1' }), true),
    ).toEqual({
      url: 'https://oauth2-token:6882/oauth2/introspection',
      clientId: 'api-a-client',
      clientSecret: 's1',
    });
    const both = files(
      { introspection: { ...introspection, client_secret: 's2' } },
      { introspectionClientSecret: 's1' },
    );
    expect(introspectionEndpoint(both, false)?.clientSecret).toBe('s1');
    const inClientYml = files({ introspection: { ...introspection, client_secret: 's2' } });
    expect(introspectionEndpoint(inClientYml, false)?.clientSecret).toBe('s2');
    expect(configError(() => introspectionEndpoint(files({ introspection }), true))).toEqual({
      file: '/config/secret.yml',
      key: 'introspectionClientSecret',
      reason: 'is required to introspect opaque tokens (security.yml enableVerifySwt)',
    });
  });

  it("without it: none beside JWT verification; light-4j's key section when JWTs are not verified", () => {
    const key = {
      server_url: 'https://oauth2-token:6882',
      uri: '/oauth2/introspection',
      client_id: 'api-a-client',
      jwk: false,
    };
    expect(introspectionEndpoint(files({ key }, { keyClientSecret: 'k' }), true)).toBeUndefined();
    expect(introspectionEndpoint(files({ key }, { keyClientSecret: 'k' }), false)).toEqual({
      url: 'https://oauth2-token:6882/oauth2/introspection',
      clientId: 'api-a-client',
      clientSecret: 'k',
    });
    expect(configError(() => introspectionEndpoint(files({}), false))).toEqual({
      file: '/config/client.yml',
      key: 'oauth.key.server_url',
      reason:
        "is required to introspect opaque tokens (security.yml enableVerifySwt): the introspection server is oauth.introspection, or light-4j's oauth.token.key when JWTs are not verified",
    });
    expect(
      configError(() =>
        introspectionEndpoint(
          files({ key: { ...key, client_id: undefined } }, { keyClientSecret: 'k' }),
          false,
        ),
      ).key,
    ).toBe('oauth.key.client_id');
    expect(configError(() => introspectionEndpoint(files({ key }), false))).toMatchObject({
      file: '/config/secret.yml',
      key: 'keyClientSecret',
    });
  });
});
