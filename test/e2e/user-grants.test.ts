import { HttpClient } from '@chain/http';
import { TokenManager, clientConfigSchema, type UserToken } from '@chain/oauth-client';
import { ConfigLoader } from '@chain/config';
import {
  httpsRequest,
  claimsOf,
  startTokenServer,
  tokenServerYml,
  type TokenServerProcess,
  CERTS,
  configDir,
  EIGHT,
  LETTERS,
  at,
  jsonLines,
  startChain,
  type RunningChain,
} from '@chain/testkit';

// Everything real: the token server issues a code to a user (Basic credentials, no login
// page), a client of ours exchanges it with @chain/oauth-client as client.yml says, and the
// user's token goes through api-a … api-d; later the token is renewed by the refresh grant,
// without the user.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

const REDIRECT = 'https://localhost:3000/authorization';
/** The user's access tokens live 4 s here, so the refresh is seen within the test. */
const USER_LIFETIME_S = 4;

const CLIENTS = `clients:
  api-a-client: { secret: api-a-secret, scope: [api_b.r, api_b.w] }
  api-b-client: { secret: api-b-secret, scope: [api_c.r, api_c.w] }
  api-c-client: { secret: api-c-secret, scope: [api_d.r, api_d.w] }
  api-d-client: { secret: api-d-secret, scope: [] }
  web-app:
    secret: web-app-secret
    scope: [api_a.r, api_a.w]
    redirectUri: ${REDIRECT}
    tokenLifetimeSeconds: ${USER_LIFETIME_S}
`;
const USERS = 'users:\n  alice: { password: alice-password }\n  bob: { password: bob-password }\n';

describe('the authorization code and refresh token grants through the whole chain (real processes)', () => {
  let ts: TokenServerProcess;
  let chain: RunningChain;
  let web: TokenManager;
  let http: HttpClient;

  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml(),
      files: { 'clients.yml': CLIENTS, 'users.yml': USERS },
    });
    chain = await startChain({ ts });
    // The web application's client.yml and secret.yml, read by the real loader.
    const dir = configDir({
      'client.yml': `tls:
  trustStore: ${CERTS}/ca.crt
oauth:
  token:
    server_url: ${ts.tokenUrl}
    tokenRenewBeforeExpired: 1000
    authorization_code:
      uri: /oauth2/token
      client_id: web-app
      redirect_uri: ${REDIRECT}
`,
    });
    const client = new ConfigLoader({ bundledDir: dir, env: {} }).load(
      'client',
      clientConfigSchema,
    );
    // The web application's one HTTP client, with client.yml's trust store.
    http = new HttpClient(client);
    web = new TokenManager({
      client,
      secret: { authorizationCodeClientSecret: 'web-app-secret' },
      http,
    });
  });

  afterAll(async () => {
    await http?.destroy();
    await Promise.all([ts?.stop(), chain?.stop()]);
  });

  /** The user signs in with Basic credentials; the code comes back in the redirect. */
  async function codeFor(user: string, password: string, state: string): Promise<string> {
    const answer = await httpsRequest(
      `${ts.tokenUrl}/oauth2/code?${new URLSearchParams({
        response_type: 'code',
        client_id: 'web-app',
        redirect_uri: REDIRECT,
        scope: 'api_a.r',
        state,
      })}`,
      {
        headers: {
          Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
        },
      },
    );
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.location as string);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe(state);
    return location.searchParams.get('code')!;
  }

  /** Each hop's audit line for a correlation id. */
  const auditOf = async (correlationId: string) => {
    const lines = [];
    for (const letter of LETTERS) {
      const p = chain.services[letter];
      await p.waitForLine(
        (l) =>
          l.includes(`"correlationId":"${correlationId}"`) && l.includes('"msg":"jwt verified"'),
      );
      lines.push(
        jsonLines(p).find((l) => l.msg === 'jwt verified' && l.correlationId === correlationId)!,
      );
    }
    return lines;
  };

  let alice: UserToken;

  it("alice's code, exchanged by the client: her token carries user_id and every hop's audit line shows her", async () => {
    alice = await web.authorizationCode(await codeFor('alice', 'alice-password', 'state-1'));
    const token = await alice.get();
    expect(claimsOf(token)).toMatchObject({
      user_id: 'alice',
      client_id: 'web-app',
      scope: 'api_a.r',
    });
    const answer = await chain.call('a', {
      Authorization: `Bearer ${token}`,
      'X-Correlation-Id': 'user-grants-1',
    });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: EIGHT });
    for (const line of await auditOf('user-grants-1')) {
      expect(line).toMatchObject({ client_id: 'web-app', user_id: 'alice', scope: 'api_a.r' });
    }
    // Never a token in a log line.
    for (const letter of LETTERS)
      expect(chain.services[letter].lines.join('\n')).not.toContain(token);
  });

  it('a code is used once: a second exchange is refused (invalid_grant), the user token keeps working', async () => {
    const code = await codeFor('bob', 'bob-password', 'state-2');
    const bob = await web.authorizationCode(code);
    await expect(web.authorizationCode(code)).rejects.toMatchObject({
      name: 'TokenFetchError',
      code: 'invalid_grant',
    });
    // The reuse revoked what the code gave: the refresh token; the access token still verifies.
    const answer = await chain.call('a', { Authorization: `Bearer ${await bob.get()}` });
    expect(answer.status).toBe(200);
  });

  it('renewed by the refresh grant without alice: a new token, still hers, through the chain', async () => {
    const first = await alice.get();
    // Wait until her token is past its expiry, as the token server wrote when it issued it.
    const issued = jsonLines(ts).filter(
      (l) => l.msg === 'token issued' && l.clientId === 'web-app',
    );
    await at((issued[0].expiresAt as number) + 100);
    expect(alice.state()).toBe('expired');
    const renewed = await alice.get();
    expect(renewed).not.toBe(first);
    expect(claimsOf(renewed)).toMatchObject({ user_id: 'alice', client_id: 'web-app' });
    // The token server's line may still be in its log buffer (written every 50 ms under load).
    const isRefresh = (l: string) =>
      ['"msg":"token request"', '"clientId":"web-app"', '"grantType":"refresh_token"'].every((f) =>
        l.includes(f),
      );
    await ts.waitForLine(isRefresh);
    expect(ts.lines.filter(isRefresh)).toHaveLength(1);
    const answer = await chain.call('a', {
      Authorization: `Bearer ${renewed}`,
      'X-Correlation-Id': 'user-grants-2',
    });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: EIGHT });
    for (const line of await auditOf('user-grants-2')) {
      expect(line).toMatchObject({ client_id: 'web-app', user_id: 'alice' });
    }
  });
});
