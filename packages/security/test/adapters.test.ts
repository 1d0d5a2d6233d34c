import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import Fastify from 'fastify';
import {
  CERTS,
  certificateBound,
  certificateThumbprint,
  configDir,
  devSigningKey,
  hostileTokens,
  httpsRequest,
  jwtSecurityYml,
  mintToken,
  type Answer,
} from '@chain/testkit';
import type { AuthInfo } from '../src/authorizer.js';
import { createExpressVerifier } from '../src/express.js';
import { fastifySecurity } from '../src/fastify.js';
import { createNodeVerifier } from '../src/node.js';
import type { VerifierOptions } from '../src/verifier.js';

// One behaviour, three adapters: each serves GET /pets (scope petstore.r) over real HTTPS
// sockets with two-way TLS optional, configured from the same security.yml file, and every case
// below runs against each with the exact status, body and challenge the services answer.

const read = (...parts: string[]) => fs.readFileSync(path.join(CERTS, ...parts));
const TLS: https.ServerOptions = {
  key: read('server.key'),
  cert: read('server.crt'),
  ca: read('clients', 'ca.crt'),
  requestCert: true,
  rejectUnauthorized: false,
  // A 100 KB token must reach the adapter (Node's default header limit is 16 KB).
  maxHeaderSize: 256 * 1024,
};
const client = (name: string) => ({
  key: read('clients', `${name}.pem`),
  cert: read('clients', `${name}.pem`),
});
const API_A = client('api-a');
const API_B = client('api-b');
const API_A_THUMBPRINT = certificateThumbprint(read('clients', 'api-a.crt'));

const SECURITY_YML = path.join(
  configDir({
    'security.yml': jwtSecurityYml({
      scope: true,
      keys: { logJwtToken: false, skipPathPrefixes: '/public' },
    }),
  }),
  'security.yml',
);
const primary = devSigningKey('100');

/** What the handler saw of the verified caller. */
const seen = (auth: AuthInfo | null | undefined) => ({
  clientId: auth?.clientId,
  userId: auth?.userId,
  scopes: auth?.scopes,
  binding: auth?.binding ?? null,
});

/** Each adapter's server, not listening yet: GET /pets needs petstore.r. */
const ADAPTERS: Record<string, (options: VerifierOptions) => Promise<https.Server>> = {
  express: async (options) => {
    const requireScopes = createExpressVerifier(options);
    const app = express();
    app.get('/pets', requireScopes(['petstore.r']), (req, res) => void res.json(seen(req.auth)));
    app.get('/public/info', requireScopes(), (req, res) => void res.json(seen(req.auth)));
    return https.createServer(TLS, app);
  },
  fastify: async (options) => {
    let server: https.Server | undefined;
    const app = Fastify({
      serverFactory: (handler) => (server = https.createServer(TLS, handler)),
    });
    await app.register(fastifySecurity, options);
    app.get('/pets', { config: { scopes: ['petstore.r'] } }, async (request) => seen(request.auth));
    app.get('/public/info', async (request) => seen(request.auth));
    await app.ready();
    return server!;
  },
  node: async (options) => {
    const verify = createNodeVerifier(options);
    return https.createServer(TLS, (req, res) => {
      const scopes = req.url?.startsWith('/pets') ? ['petstore.r'] : [];
      void verify(req, res, scopes).then((auth) => {
        if (auth === undefined) return; // refused: answered
        const body = JSON.stringify(seen(auth));
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
      });
    });
  },
};

const bodyOf = (statusCode: number, code: string, message: string, description: string) => ({
  statusCode,
  code,
  message,
  description,
});
const invalidChallenge = (description: string) =>
  `Bearer realm="api", error="invalid_token", error_description="${description}"`;
const INVALID = 'Incorrect signature or malformed token in authorization header';
const ERR10000 = bodyOf(401, 'ERR10000', 'INVALID_AUTH_TOKEN', INVALID);
const MISMATCH =
  'Token in authorization header is bound to a client certificate or DPoP key that the request does not prove';
const SCOPES =
  'Scopes [other.r, other.w] in authorization token and specification scopes [petstore.r] are not matched';

const token = (scope: string[], options: Parameters<typeof mintToken>[1] = {}) =>
  mintToken(primary, { scope, clientId: 'caller-client', userId: 'user-7', ...options });
const bearer = (jwt: string) => ({ Authorization: `Bearer ${jwt}` });
const bound = () => token(['petstore.r'], { claims: certificateBound(API_A_THUMBPRINT) });

type Case = [
  name: string,
  request: () => { headers: Record<string, string>; client?: typeof API_A; path?: string },
  status: number,
  body: unknown,
  challenge: string | undefined,
];

const MISSING_TOKEN = bodyOf(
  401,
  'ERR10002',
  'MISSING_AUTH_TOKEN',
  'No Authorization header or the token is not bearer type',
);

const CASES: Case[] = [
  ['no token: 401 ERR10002', () => ({ headers: {} }), 401, MISSING_TOKEN, 'Bearer realm="api"'],
  [
    'a Basic Authorization: 401 ERR10002',
    () => ({ headers: { Authorization: 'Basic dXNlcjpwYXNz' } }),
    401,
    MISSING_TOKEN,
    'Bearer realm="api"',
  ],
  [
    'a token without the scope: 403 ERR10005',
    () => ({ headers: bearer(token(['other.r', 'other.w'])) }),
    403,
    bodyOf(403, 'ERR10005', 'AUTH_TOKEN_SCOPE_MISMATCH', SCOPES),
    `Bearer realm="api", error="insufficient_scope", error_description="${SCOPES}", scope="petstore.r"`,
  ],
  [
    'an expired token: 401 ERR10001',
    () => ({
      headers: bearer(token(['petstore.r'], { now: Date.now() - 3_600_000, expiresIn: 600 })),
    }),
    401,
    bodyOf(401, 'ERR10001', 'AUTH_TOKEN_EXPIRED', 'Jwt token in authorization header expired'),
    invalidChallenge('Jwt token in authorization header expired'),
  ],
  [
    'a good token: 200, its caller reaching the handler',
    () => ({ headers: bearer(token(['petstore.w', 'petstore.r'])) }),
    200,
    {
      clientId: 'caller-client',
      userId: 'user-7',
      scopes: ['petstore.w', 'petstore.r'],
      binding: null,
    },
    undefined,
  ],
  [
    'a certificate-bound token from its certificate: 200 with the binding',
    () => ({ headers: bearer(bound()), client: API_A }),
    200,
    {
      clientId: 'caller-client',
      userId: 'user-7',
      scopes: ['petstore.r'],
      binding: { x5t: API_A_THUMBPRINT },
    },
    undefined,
  ],
  [
    'a certificate-bound token from another certificate: 401 ERR20012',
    () => ({ headers: bearer(bound()), client: API_B }),
    401,
    bodyOf(401, 'ERR20012', 'TOKEN_BINDING_MISMATCH', MISMATCH),
    invalidChallenge(MISMATCH),
  ],
  [
    'a certificate-bound token without a certificate: 401 ERR20012',
    () => ({ headers: bearer(bound()) }),
    401,
    bodyOf(401, 'ERR20012', 'TOKEN_BINDING_MISMATCH', MISMATCH),
    invalidChallenge(MISMATCH),
  ],
  [
    'a path of skipPathPrefixes: 200 without a token, nothing verified',
    () => ({ headers: {}, path: '/public/info' }),
    200,
    { binding: null },
    undefined,
  ],
  [
    'a path of skipPathPrefixes: 200 with a hostile token, nothing verified',
    () => ({ headers: bearer('not.a.token'), path: '/public/info?x=1' }),
    200,
    { binding: null },
    undefined,
  ],
  ...hostileTokens(primary, { scope: ['petstore.r'] }).map(({ name, token: jwt }): Case => [
    `hostile token, ${name}: 401 ERR10000`,
    () => ({ headers: bearer(jwt) }),
    401,
    ERR10000,
    invalidChallenge(INVALID),
  ]),
];

describe.each(Object.keys(ADAPTERS))('@chain/security/%s', (adapter) => {
  let server: https.Server;
  let origin: string;

  beforeAll(async () => {
    server = await ADAPTERS[adapter]({ config: SECURITY_YML });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const pick = (res: Answer) => ({
    status: res.status,
    body: res.body,
    challenge: res.headers['www-authenticate'],
    type: res.status === 200 ? 'json' : res.headers['content-type'],
    length: Number(res.headers['content-length']),
  });

  it.each(CASES)('%s', async (_name, request, status, body, challenge) => {
    const { headers, client, path = '/pets?with=query' } = request();
    const res = await httpsRequest(origin + path, { headers, client, servername: 'localhost' });
    expect(pick(res)).toEqual({
      status,
      body,
      challenge,
      type: status === 200 ? 'json' : 'application/json',
      length: Buffer.byteLength(res.text),
    });
    expect(res.text).toBe(JSON.stringify(body));
  });
});

describe('the package: one core, thin adapters as subpath exports', () => {
  const root = path.resolve(import.meta.dirname, '..');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
    peerDependenciesMeta: Record<string, unknown>;
  };
  const source = (name: string) => fs.readFileSync(path.join(root, 'src', name), 'utf8');
  const FRAMEWORK = /^import (type )?.*from '(express|fastify)';$/gm;

  it('exports each adapter with its types, express and fastify optional peers', () => {
    for (const name of Object.keys(ADAPTERS)) {
      expect(pkg.exports[`./${name}`]).toEqual({
        types: `./dist/${name}.d.ts`,
        default: `./dist/${name}.js`,
      });
      expect(fs.existsSync(path.join(root, 'src', `${name}.ts`))).toBe(true);
    }
    expect(pkg.peerDependenciesMeta).toEqual({
      express: { optional: true },
      fastify: { optional: true },
    });
  });

  it('imports no framework outside the adapters, and only their types inside', () => {
    const modules = fs.readdirSync(path.join(root, 'src'));
    const framework = modules.filter((m) => !['express.ts', 'fastify.ts'].includes(m));
    expect(framework.filter((m) => source(m).match(FRAMEWORK))).toEqual([]);
    for (const adapter of ['express.ts', 'fastify.ts']) {
      const imports = [...source(adapter).matchAll(FRAMEWORK)].map((m) => m[1]);
      expect(imports).toEqual(['type ']);
    }
  });
});
