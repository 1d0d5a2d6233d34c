import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import {
  CERTS,
  createSigningKey,
  devSigningKey,
  hostileTokens,
  jwtSecurityYml,
  mintToken,
  startKeyServer,
  type KeyServer,
  type SigningKey,
} from '@chain/testkit';

/**
 * The service-level security walk, shared by the petstore and api-a suites: every
 * catalogue row ERR10000-ERR10008 and every hostile token with status, body and
 * WWW-Authenticate together, key rotation, a flood of made-up kids and a key server outage
 * against a real HTTPS key server (testkit), and the audit log.
 */
export interface SecuredServiceCase {
  /** A protected operation of the service, e.g. `/v2/pet/1`. */
  path: string;
  /** Its spec scopes, in spec order. */
  required: string[];
  /** Its 200 answer with a good token. */
  okBody: unknown;
  /** Key-server credentials of the service (bundled client.yml client_id, secret.yml keyClientSecret). */
  keyClient: { id: string; secret: string };
  /**
   * Builds the app from override files: security.yml and client.yml content pointing at the
   * key server are given; the service may add its own. `lines` receives its log lines.
   */
  createApp(
    files: { security: string; keyServerUrl: string },
    lines: string[],
  ): http.RequestListener;
}

export const primary: SigningKey = devSigningKey('100');
export const secondary: SigningKey = devSigningKey('101');

/** security.yml of the walk: scopes checked, both dev certificates, the token logged. */
export const securityYml = (extra = '') =>
  jwtSecurityYml({
    scope: true,
    clockSkewInSeconds: 60,
    keys: { logJwtToken: true, logClientUserScope: false },
    extra,
  });

const INVALID = {
  'WWW-Authenticate':
    'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"',
};
const ERR10000 = {
  statusCode: 401,
  code: 'ERR10000',
  message: 'INVALID_AUTH_TOKEN',
  description: 'Incorrect signature or malformed token in authorization header',
};

export function describeSecurity(name: string, service: SecuredServiceCase): void {
  const bearer = (token: string) => `Bearer ${token}`;
  const scoped = (scope: string[], key: SigningKey = primary, extra = {}) =>
    mintToken(key, { scope, clientId: 'caller-client', userId: 'user-7', ...extra });
  const good = () => scoped([service.required[service.required.length - 1]]);
  const expired = (scope = service.required) =>
    mintToken(primary, { now: Date.now() - 3_600_000, expiresIn: 600, scope });

  describe(`${name} security (security.yml enableVerifyJwt: true)`, () => {
    const lines: string[] = [];
    let keyServer: KeyServer;
    let server: http.Server;
    const rotated = createSigningKey('200');

    beforeAll(async () => {
      keyServer = await startKeyServer({
        tls: {
          key: fs.readFileSync(path.join(CERTS, 'server.key')),
          cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
        },
        clientId: service.keyClient.id,
        clientSecret: service.keyClient.secret,
        keys: { '200': rotated.certificatePem },
      });
      const app = service.createApp(
        { security: securityYml(), keyServerUrl: keyServer.url },
        lines,
      );
      // A 100 KB token must reach the app (Node's default header limit is 16 KB).
      server = http.createServer({ maxHeaderSize: 256 * 1024 }, app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await keyServer.stop();
    });

    const get = (headers: Record<string, string> = {}, url = service.path) => {
      let req = request(server).get(url);
      for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
      return req;
    };

    it('answers 200 to a token holding one of the operation scopes', async () => {
      const res = await get({ Authorization: bearer(good()) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(service.okBody);
      expect(res.headers['www-authenticate']).toBeUndefined();
    });

    describe('the catalogue, ERR10000 to ERR10008', () => {
      const stranger = createSigningKey('100');
      const required = `[${service.required.join(', ')}]`;
      const cases: [string, () => Record<string, string>, number, object, string | undefined][] = [
        [
          'ERR10000 signed by a key that is not the one of its kid',
          () => ({ Authorization: bearer(scoped(service.required, stranger)) }),
          401,
          ERR10000,
          INVALID['WWW-Authenticate'],
        ],
        [
          'ERR10001 expired',
          () => ({ Authorization: bearer(expired()) }),
          401,
          {
            statusCode: 401,
            code: 'ERR10001',
            message: 'AUTH_TOKEN_EXPIRED',
            description: 'Jwt token in authorization header expired',
          },
          'Bearer realm="api", error="invalid_token", error_description="Jwt token in authorization header expired"',
        ],
        ...['', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'Token abc'].map(
          (authorization) =>
            [
              `ERR10002 Authorization ${JSON.stringify(authorization)}`,
              () => (authorization ? { Authorization: authorization } : {}),
              401,
              {
                statusCode: 401,
                code: 'ERR10002',
                message: 'MISSING_AUTH_TOKEN',
                description: 'No Authorization header or the token is not bearer type',
              },
              'Bearer realm="api"',
            ] as (typeof cases)[number],
        ),
        [
          'ERR10003 X-Scope-Token that does not verify',
          () => ({
            Authorization: bearer(good()),
            'X-Scope-Token': bearer(scoped(service.required, stranger)),
          }),
          401,
          {
            statusCode: 401,
            code: 'ERR10003',
            message: 'INVALID_SCOPE_TOKEN',
            description: 'Incorrect signature or malformed token in X-Scope-Token header',
          },
          'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in X-Scope-Token header"',
        ],
        [
          'ERR10004 X-Scope-Token expired',
          () => ({ Authorization: bearer(good()), 'X-Scope-Token': bearer(expired()) }),
          401,
          {
            statusCode: 401,
            code: 'ERR10004',
            message: 'SCOPE_TOKEN_EXPIRED',
            description: 'Jwt token in X-Scope-Token expired',
          },
          'Bearer realm="api", error="invalid_token", error_description="Jwt token in X-Scope-Token expired"',
        ],
        [
          'ERR10005 token without any of the scopes',
          () => ({ Authorization: bearer(scoped(['other.r', 'other.w'])) }),
          403,
          {
            statusCode: 403,
            code: 'ERR10005',
            message: 'AUTH_TOKEN_SCOPE_MISMATCH',
            description: `Scopes [other.r, other.w] in authorization token and specification scopes ${required} are not matched`,
          },
          `Bearer realm="api", error="insufficient_scope", error_description="Scopes [other.r, other.w] in authorization token and specification scopes ${required} are not matched", scope="${service.required.join(' ')}"`,
        ],
        [
          'ERR10006 X-Scope-Token without any of the scopes',
          () => ({ Authorization: bearer(good()), 'X-Scope-Token': bearer(scoped(['other.r'])) }),
          403,
          {
            statusCode: 403,
            code: 'ERR10006',
            message: 'SCOPE_TOKEN_SCOPE_MISMATCH',
            description: `Scopes [other.r] in scope token and specification scopes ${required} are not matched`,
          },
          `Bearer realm="api", error="insufficient_scope", error_description="Scopes [other.r] in scope token and specification scopes ${required} are not matched", scope="${service.required.join(' ')}"`,
        ],
      ];

      it.each(cases)('%s', async (_name, headers, status, body, challenge) => {
        const res = await get(headers());
        expect({
          status: res.status,
          type: res.headers['content-type'],
          body: res.body,
          challenge: res.headers['www-authenticate'],
        }).toEqual({ status, type: 'application/json', body, challenge });
      });

      it('ERR10007 for a path not in the spec, even with a good token', async () => {
        const res = await get({ Authorization: bearer(good()) }, '/v9/nothing');
        expect(res.status).toBe(404);
        expect(res.body).toEqual({
          statusCode: 404,
          code: 'ERR10007',
          message: 'INVALID_REQUEST_PATH',
          description: 'Request path /v9/nothing cannot be found in the spec.',
        });
        expect(res.headers['www-authenticate']).toBeUndefined();
      });

      it('ERR10008 for a method not in the spec', async () => {
        const res = await request(server).delete(service.path).set('Authorization', bearer(good()));
        expect(res.status).toBe(405);
        expect(res.body).toEqual({
          statusCode: 405,
          code: 'ERR10008',
          message: 'METHOD_NOT_ALLOWED',
          description: `Request method DELETE cannot be found in the path ${service.path}.`,
        });
        expect(res.headers['www-authenticate']).toBeUndefined();
      });

      it('passes with a scope token holding a scope while the main token holds none', async () => {
        const res = await get({
          Authorization: bearer(scoped(['other.r'])),
          'X-Scope-Token': bearer(scoped([service.required[0]])),
        });
        expect(res.status).toBe(200);
      });
    });

    describe('hostile tokens: 401 ERR10000, never a 5xx, and the service keeps serving', () => {
      const tokens = hostileTokens(primary, { scope: service.required });
      it.each(tokens.map((t) => [t.name, t.token] as const))('%s', async (_name, token) => {
        const res = await get({ Authorization: bearer(token) });
        expect({
          status: res.status,
          body: res.body,
          challenge: res.headers['www-authenticate'],
        }).toEqual({ status: 401, body: ERR10000, challenge: INVALID['WWW-Authenticate'] });
        expect((await get({ Authorization: bearer(good()) })).status).toBe(200);
      });

      // Another spelling of a token that verified (and is cached): the same bytes, a new string
      const respelled: [string, (token: string) => string][] = [
        ['= padding on the signature', (t) => `${t}==`],
        [
          'the signature in standard base64',
          (t) => {
            const [h, p, sig] = t.split('.');
            return `${h}.${p}.${Buffer.from(sig, 'base64url').toString('base64')}`;
          },
        ],
      ];
      it.each(respelled)('a cached token respelled (%s): 401, as Authorization', async (_n, f) => {
        const token = good();
        expect((await get({ Authorization: bearer(token) })).status).toBe(200);
        const res = await get({ Authorization: bearer(f(token)) });
        expect({
          status: res.status,
          body: res.body,
          challenge: res.headers['www-authenticate'],
        }).toEqual({ status: 401, body: ERR10000, challenge: INVALID['WWW-Authenticate'] });
      });

      it.each(respelled)('a cached token respelled (%s): 401, as X-Scope-Token', async (_n, f) => {
        const main = scoped(['other.r']);
        const scope = scoped([service.required[0]]);
        const ok = await get({ Authorization: bearer(main), 'X-Scope-Token': bearer(scope) });
        expect(ok.status).toBe(200);
        const res = await get({ Authorization: bearer(main), 'X-Scope-Token': bearer(f(scope)) });
        expect({ status: res.status, body: res.body }).toEqual({
          status: 401,
          body: {
            statusCode: 401,
            code: 'ERR10003',
            message: 'INVALID_SCOPE_TOKEN',
            description: 'Incorrect signature or malformed token in X-Scope-Token header',
          },
        });
      });

      it('never writes a refused token to the log', () => {
        const log = lines.join('\n');
        for (const { token } of tokens) expect(log.includes(token)).toBe(false);
        // the reason of a refusal is logged, without the token
        expect(log).toMatch(/"alg is not RS256"/);
      });

      it('never asked the key server about a path-like kid', () => {
        expect(keyServer.requests.filter((p) => /\.\.|%2F|etc/.test(p))).toEqual([]);
      });
    });

    describe('keys: rotation, a flood of made-up kids, an outage', () => {
      it('verifies kid 101 with the secondary certificate, without the key server', async () => {
        const before = keyServer.count;
        const res = await get({ Authorization: bearer(scoped(service.required, secondary)) });
        expect(res.status).toBe(200);
        expect(keyServer.count).toBe(before);
      });

      it('fetches a new kid from the key server once, then keeps it', async () => {
        const before = keyServer.count;
        for (let i = 0; i < 3; i++) {
          const res = await get({ Authorization: bearer(scoped(service.required, rotated)) });
          expect(res.status).toBe(200);
        }
        expect(keyServer.requests.slice(before)).toEqual(['/oauth2/key/200']);
      });

      it('answers 503 ERR20005 while the key server is down, never accepting the token', async () => {
        await keyServer.stop();
        const newKey = createSigningKey('300');
        const started = Date.now();
        const res = await get({ Authorization: bearer(scoped(service.required, newKey)) });
        expect(Date.now() - started).toBeLessThan(2000);
        expect(res.status).toBe(503);
        expect(res.body).toEqual({
          statusCode: 503,
          code: 'ERR20005',
          message: 'KEY_SERVER_UNAVAILABLE',
          description:
            'The verification key for kid 300 could not be fetched from the key distribution server',
        });
        expect(res.headers['www-authenticate']).toBeUndefined();
        // known keys keep working during the outage
        expect((await get({ Authorization: bearer(good()) })).status).toBe(200);
        await keyServer.start();
      });

      it('answers ERR20005 within the time-out when the key server hangs', async () => {
        keyServer.mode = 'hang';
        const started = Date.now();
        const res = await get({
          Authorization: bearer(scoped(service.required, createSigningKey('301'))),
        });
        keyServer.mode = 'serve';
        expect(res.status).toBe(503);
        expect(res.body.code).toBe('ERR20005');
        expect(Date.now() - started).toBeLessThan(2500);
      });

      it('verifies a new kid again once the key server is back', async () => {
        const back = createSigningKey('302');
        keyServer.keys.set('302', back.certificatePem);
        const res = await get({ Authorization: bearer(scoped(service.required, back)) });
        expect(res.status).toBe(200);
      });

      it('answers 1,000 requests with made-up kids 401 ERR10000 with a handful of key server requests (5 at once, then one a second)', async () => {
        const before = keyServer.count;
        const started = Date.now();
        const [, payload, signature] = scoped(service.required).split('.');
        const statuses: number[] = [];
        for (let batch = 0; batch < 10; batch++) {
          const answers = await Promise.all(
            Array.from({ length: 100 }, (_v, i) =>
              get({
                Authorization: bearer(`${header(`made-up-${batch}-${i}`)}.${payload}.${signature}`),
              }),
            ),
          );
          for (const res of answers) {
            statuses.push(res.status);
            expect(res.body).toEqual(ERR10000);
          }
        }
        expect(statuses).toEqual(Array(1000).fill(401));
        const seconds = Math.ceil((Date.now() - started) / 1000);
        expect(keyServer.count - before).toBeLessThanOrEqual(5 + seconds);
        expect((await get({ Authorization: bearer(good()) })).status).toBe(200);
      }, 30_000);

      it('never logs the key client secret', () => {
        expect(lines.join('\n')).not.toContain(service.keyClient.secret);
      });
    });

    describe('audit log', () => {
      it('holds the whole token of a verified request (logJwtToken)', async () => {
        const token = good();
        await get({ Authorization: bearer(token) }).expect(200);
        const audit = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'jwt verified');
        expect(audit[audit.length - 1]).toMatchObject({ jwt: token });
        expect(audit[audit.length - 1].client_id).toBeUndefined();
      });
    });
  });
}

/** A header segment with the given kid (the signature no longer matters: the kid is unknown). */
function header(kid: string): string {
  return Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid })).toString('base64url');
}

/** The port a started http server listens on. */
export const portOf = (server: http.Server) => (server.address() as AddressInfo).port;
