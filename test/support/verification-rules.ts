import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import {
  b64url,
  CERTS,
  configDir,
  createSigningKey,
  devSigningKey,
  jwtSecurityYml,
  mintToken,
  signWith,
  standardClaims,
  startExpectingFailure,
  startKeyServer,
  writeCertificate,
  type KeyServer,
} from '@chain/testkit';
import type http from 'node:http';

/**
 * The service-level walk of the verification rules around keys and configuration, shared by the
 * petstore and api-a suites: light-oauth2's "no such kid" answers, a flood of made-up kids
 * during a rotation, the maximum age of fetched keys, a JWKS key server, audience and issuer,
 * the algorithm allow-list and its confusion cases, light-4j's request rules, configuration
 * that would weaken security, and Prometheus on its own switch. Each refusal is asserted with
 * status, body and WWW-Authenticate together.
 */
export interface RulesCase {
  /** The service's folder name (`petstore`, `api-a`), for process tests. */
  name: string;
  /** A protected operation, e.g. `/v2/pet/1`, and its spec scopes. */
  path: string;
  required: string[];
  okBody: unknown;
  /** Key-server credentials of the service (client.yml client_id, secret.yml keyClientSecret). */
  keyClient: { id: string; secret: string };
  /** client.yml of the service with the key server at `keyServerUrl` and `keyExtra` lines under oauth.key. */
  clientYml(keyServerUrl: string, keyExtra?: string): string;
  /** Builds the app from override files (name -> YAML text); `lines` receives its log lines. */
  createApp(files: Record<string, string>, lines?: string[]): http.RequestListener;
}

const INVALID_BODY = {
  statusCode: 401,
  code: 'ERR10000',
  message: 'INVALID_AUTH_TOKEN',
  description: 'Incorrect signature or malformed token in authorization header',
};
const INVALID_CHALLENGE =
  'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"';

/**
 * security.yml with verification on and kid 100 (the dev primary certificate): `jwt` lines go
 * in the jwt map (indented two spaces), `certificates` after kid 100, `top` at the end.
 */
export const securityOn = ({ jwt = '', certificates = '', top = '' } = {}) =>
  jwtSecurityYml({ scope: true, jwt, kids: ['100'], certificates, extra: top });

const tlsOptions = () => ({
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
});

/** A made-up token for a kid (its signature is whatever: the kid is unknown). */
function withKid(kid: string, scope: string[]): string {
  const header = b64url({ alg: 'RS256', typ: 'JWT', kid });
  const [, payload, signature] = mintToken(devSigningKey('100'), { scope }).split('.');
  return `${header}.${payload}.${signature}`;
}

/** Polls `check` until it is true, at most `ms`; resolves the time it took. */
async function within(ms: number, check: () => Promise<boolean>, everyMs = 100): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not true within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export function describeVerificationRules(service: RulesCase): void {
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const get = (
    app: http.RequestListener,
    headers: Record<string, string> = {},
    url = service.path,
  ) => {
    let req = request(app).get(url);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req;
  };
  const answer = async (app: http.RequestListener, headers: Record<string, string> = {}) => {
    const res = await get(app, headers);
    return {
      status: res.status,
      body: res.body as unknown,
      challenge: res.headers['www-authenticate'] as string | undefined,
    };
  };
  const refused = { status: 401, body: INVALID_BODY, challenge: INVALID_CHALLENGE };
  const ok = () => ({ status: 200, body: service.okBody, challenge: undefined });
  const scope = service.required;

  describe(`${service.name}: keys of a light-oauth2 key server`, () => {
    let keyServer: KeyServer;
    beforeAll(async () => {
      keyServer = await startKeyServer({
        tls: tlsOptions(),
        clientId: service.keyClient.id,
        clientSecret: service.keyClient.secret,
      });
    });
    afterAll(() => keyServer.stop());
    beforeEach(() => {
      keyServer.keys.clear();
      keyServer.requests.length = 0;
    });
    const app = (security = securityOn(), keyExtra = '') =>
      service.createApp({
        'security.yml': security,
        'client.yml': service.clientYml(keyServer.url, keyExtra),
      });

    it('answers a made-up kid 401 ERR10000, never 503, when light-oauth2 says 400 ERR12030 or 404 ERR12017 (defect: 503 ERR20005)', async () => {
      const a = app();
      for (const kid of ['999', '998', 'made-up-kid']) {
        for (let i = 0; i < 2; i++) {
          expect(await answer(a, bearer(withKid(kid, scope)))).toEqual(refused);
        }
      }
      // each kid asked once; the answer is remembered
      expect(keyServer.requests).toEqual([
        '/oauth2/key/999',
        '/oauth2/key/998',
        '/oauth2/key/made-up-kid',
      ]);
    });

    it('accepts a newly published kid within seconds during a flood of made-up kids (defect: the flood kept it out)', async () => {
      const a = app();
      const rotated = createSigningKey('400');
      const started = Date.now();
      let flooding = true;
      const statuses: number[] = [];
      const flood = (async () => {
        for (let i = 0; flooding; i++) {
          const batch = await Promise.all(
            Array.from({ length: 10 }, (_v, j) => get(a, bearer(withKid(`f${i}-${j}`, scope)))),
          );
          statuses.push(...batch.map((r) => r.status));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      keyServer.keys.set('400', rotated.certificatePem);
      const token = mintToken(rotated, { scope });
      const took = await within(
        8000,
        async () => (await get(a, bearer(token))).status === 200,
        200,
      );
      flooding = false;
      await flood;
      const seconds = (Date.now() - started) / 1000;
      expect(took).toBeLessThan(5000);
      expect(statuses.length).toBeGreaterThan(50);
      expect(new Set(statuses)).toEqual(new Set([401]));
      // the key server saw the burst, then about one request a second
      expect(keyServer.count).toBeLessThanOrEqual(5 + Math.ceil(seconds) + 2);
    }, 20_000);

    it('refuses a kid the key server retired within jwt.keyMaxAgeSeconds, cached tokens included (defect: trusted until restart)', async () => {
      const a = app(securityOn({ jwt: '  keyMaxAgeSeconds: 2\n' }));
      const retiring = createSigningKey('401');
      keyServer.keys.set('401', retiring.certificatePem);
      const token = mintToken(retiring, { scope, expiresIn: 3600 });
      expect(await answer(a, bearer(token))).toEqual(ok());
      keyServer.keys.delete('401');
      const took = await within(4000, async () => (await get(a, bearer(token))).status === 401);
      expect(took).toBeLessThanOrEqual(2500);
      expect(await answer(a, bearer(token))).toEqual(refused);
    });

    it('fetches the whole JWKS (jwt.keyResolver: JsonWebKeySet) and preloads it with bootstrapFromKeyService', async () => {
      const inSet = createSigningKey('402');
      keyServer.keys.set('402', inSet.certificatePem);
      const a = app(
        securityOn({
          jwt: '  keyResolver: JsonWebKeySet\n',
          top: 'bootstrapFromKeyService: true\n',
        }),
      );
      // preloaded at start, before any token
      await within(3000, async () => keyServer.requests.includes('/oauth2/key'));
      expect(await answer(a, bearer(mintToken(inSet, { scope })))).toEqual(ok());
      // certificates of security.yml are not read with bootstrapFromKeyService
      expect(await answer(a, bearer(mintToken(devSigningKey('100'), { scope })))).toEqual(refused);
      expect(keyServer.requests).toEqual(['/oauth2/key']);
    });
  });

  describe(`${service.name}: audience and issuer`, () => {
    let app: http.RequestListener;
    beforeAll(() => {
      app = service.createApp({
        'security.yml': securityOn(),
        'client.yml': service.clientYml(
          'https://localhost:1',
          '    audience: urn:chain:api\n    issuer: https://localhost:6882\n',
        ),
      });
    });
    const token = (claims: Record<string, unknown>) =>
      mintToken(devSigningKey('100'), {
        scope,
        claims: { aud: 'urn:chain:api', iss: 'https://localhost:6882', ...claims },
      });

    it('accepts the configured audience and issuer', async () => {
      expect(await answer(app, bearer(token({})))).toEqual(ok());
      expect(await answer(app, bearer(token({ aud: ['urn:other', 'urn:chain:api'] })))).toEqual(
        ok(),
      );
    });

    it.each([
      ['another audience', { aud: 'urn:com.networknt' }],
      ['no audience', { aud: undefined }],
      ['another issuer', { iss: 'https://evil.example' }],
    ])('answers a token of %s 401 ERR10000', async (_name, claims) => {
      expect(await answer(app, bearer(token(claims)))).toEqual(refused);
    });

    it('checks the X-Scope-Token too', async () => {
      const res = await answer(app, {
        ...bearer(token({})),
        'X-Scope-Token': `Bearer ${token({ aud: 'urn:other' })}`,
      });
      expect(res).toEqual({
        status: 401,
        body: {
          statusCode: 401,
          code: 'ERR10003',
          message: 'INVALID_SCOPE_TOKEN',
          description: 'Incorrect signature or malformed token in X-Scope-Token header',
        },
        challenge:
          'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in X-Scope-Token header"',
      });
    });
  });

  describe(`${service.name}: signature algorithms`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alg-certs-'));
    const pss = createSigningKey('pss', { alg: 'PS256' });
    const ec = createSigningKey('ec', { type: 'ec' });
    const ed = createSigningKey('ed', { type: 'ed25519' });
    const certs = [pss, ec, ed]
      .map((k) => `    '${k.kid}': ${writeCertificate(k, dir)}\n`)
      .join('');
    let allowAll: http.RequestListener;
    beforeAll(() => {
      allowAll = service.createApp({
        'security.yml': securityOn({
          jwt: '  algorithms: [RS256, PS256, ES256, EdDSA]\n',
          certificates: certs,
        }),
        'client.yml': service.clientYml('https://localhost:1'),
      });
    });

    it.each([
      ['RS256', () => devSigningKey('100')],
      ['PS256', () => pss],
      ['ES256', () => ec],
      ['EdDSA', () => ed],
    ])('accepts %s when jwt.algorithms lists it', async (_alg, key) => {
      expect(await answer(allowAll, bearer(mintToken(key(), { scope })))).toEqual(ok());
    });

    it('refuses ES256 and EdDSA by default (RS256 only)', async () => {
      const rsOnly = service.createApp({
        'security.yml': securityOn(),
        'client.yml': service.clientYml('https://localhost:1'),
      });
      for (const key of [ec, ed]) {
        const token = signWith(
          key.privateKey,
          { alg: key.alg, typ: 'JWT', kid: '100' },
          standardClaims({ scope }),
        );
        expect(await answer(rsOnly, bearer(token))).toEqual(refused);
      }
    });

    it.each([
      [
        'an RS256 header on the kid of an EC key',
        { alg: 'RS256', kid: 'ec' },
        () => devSigningKey('100'),
      ],
      ['an ES256 header on the kid of an RSA key', { alg: 'ES256', kid: '100' }, () => ec],
      ['an EdDSA header on the kid of an RSA key', { alg: 'EdDSA', kid: '100' }, () => ed],
      ['HS256 keyed with the RSA certificate', { alg: 'HS256', kid: '100' }, undefined],
      ['alg none', { alg: 'none', kid: '100' }, undefined],
    ])('answers %s 401 ERR10000', async (_name, header, signer) => {
      const claims = standardClaims({ scope });
      let token: string;
      if (signer) {
        token = signWith(signer().privateKey, { typ: 'JWT', ...header }, claims);
      } else {
        const input = `${b64url({ typ: 'JWT', ...header })}.${b64url(claims)}`;
        const mac = crypto
          .createHmac('sha256', devSigningKey('100').certificatePem)
          .update(input)
          .digest('base64url');
        token = `${input}.${header.alg === 'none' ? '' : mac}`;
      }
      expect(await answer(allowAll, bearer(token))).toEqual(refused);
    });
  });

  describe(`${service.name}: light-4j request rules`, () => {
    const build = (top: string) =>
      service.createApp({
        'security.yml': securityOn({ top }),
        'client.yml': service.clientYml('https://localhost:1'),
      });
    const good = () =>
      mintToken(devSigningKey('100'), { scope, clientId: 'caller', userId: 'u-1' });

    it('skipPathPrefixes: the operation answers without a token; other paths still need one', async () => {
      const prefix = '/' + service.path.split('/')[1];
      const skipping = build(`skipPathPrefixes: ['${prefix}']\n`);
      expect(await answer(skipping)).toEqual(ok());
      const near = build(`skipPathPrefixes: ['${prefix}x', '${service.path}/deeper']\n`);
      expect((await answer(near)).status).toBe(401);
    });

    it('enableExtractScopeToken false: an X-Scope-Token is not verified', async () => {
      const headers = { ...bearer(good()), 'X-Scope-Token': 'Bearer not-a-jwt' };
      expect((await answer(build(''), headers)).status).toBe(401);
      expect(await answer(build('enableExtractScopeToken: false\n'), headers)).toEqual(ok());
    });

    it('skipVerifyScopeWithoutSpec: a path outside the spec is still 404 ERR10007 (the spec answers first)', async () => {
      for (const extra of ['', 'skipVerifyScopeWithoutSpec: true\n']) {
        const res = await get(build(extra), bearer(good()), '/not/in/spec');
        expect({
          status: res.status,
          body: res.body,
          challenge: res.headers['www-authenticate'],
        }).toEqual({
          status: 404,
          body: {
            statusCode: 404,
            code: 'ERR10007',
            message: 'INVALID_REQUEST_PATH',
            description: 'Request path /not/in/spec cannot be found in the spec.',
          },
          challenge: undefined,
        });
      }
    });

    it('passThroughClaims: a claim that would inject a header line is left out; the request is served', async () => {
      const app = build('passThroughClaims:\n  user_id: X-User-Id\n');
      const token = mintToken(devSigningKey('100'), { scope, userId: 'u\r\nX-Admin: true' });
      expect(await answer(app, { ...bearer(token), 'X-User-Id': 'admin' })).toEqual(ok());
    });
  });

  describe(`${service.name}: Prometheus on its own switch`, () => {
    it('serves /metrics with prometheus.yml enabled and metrics.yml (InfluxDB) off, and not by default', async () => {
      const files = { 'client.yml': service.clientYml('https://localhost:1') };
      const on = service.createApp({ ...files, 'prometheus.yml': 'enabled: true\n' });
      await get(on, {}, '/health').expect(200);
      const res = await get(on, {}, '/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('# TYPE requests_total counter');
      expect((await get(service.createApp(files), {}, '/metrics')).status).toBe(404);
    });
  });

  describe(`${service.name}: configuration that would weaken security stops the built service`, () => {
    const stops = async (files: Record<string, string>) => {
      const dir = configDir({
        'server.yml': `serviceId: rules-test\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
        'client.yml': service.clientYml('https://localhost:1'),
        ...files,
      });
      const { code, stderr } = await startExpectingFailure(service.name, dir);
      return { code, stderr: stderr.replaceAll(dir, '<dir>') };
    };

    it('an empty security.yml (defect: it started with verification off)', async () => {
      expect(await stops({ 'security.yml': '' })).toEqual({
        code: 1,
        stderr:
          'Cannot start: Config error in <dir>/security.yml: is empty; give its keys, or remove the file to use the defaults\n',
      });
    });

    it('a private key given as a certificate (defect: it was accepted)', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'private-'));
      const file = path.join(dir, 'primary.crt');
      fs.copyFileSync(path.join(CERTS, 'primary.key'), file);
      const { code, stderr } = await stops({
        'security.yml': `enableVerifyJwt: true\njwt:\n  certificate:\n    '100': ${file}\n`,
      });
      expect(code).toBe(1);
      expect(stderr).toBe(
        `Cannot start: Config error in <dir>/security.yml at key "jwt.certificate.100": ${file} holds a private key, not a certificate or public key\n`,
      );
    });

    it('a misspelled secret.yml key, naming the closest one (defect: it was accepted)', async () => {
      expect(await stops({ 'secret.yml': 'keyClientSecrets: x\n' })).toEqual({
        code: 1,
        stderr:
          'Cannot start: Config error in <dir>/secret.yml at key "keyClientSecrets": unknown key; did you mean "keyClientSecret"?\n',
      });
    });

    it('an all-digit secret loads as text (defect: a type error stopped the service)', () => {
      expect(() =>
        service.createApp({
          'secret.yml': `clientCredentialsClientSecret: 123456\nkeyClientSecret: 0042\n`,
          'client.yml': service.clientYml('https://localhost:1'),
        }),
      ).not.toThrow();
    });
  });
}
