import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import path from 'node:path';
import { startService, type RunningService } from '@chain/runtime';
import {
  CERTS,
  ROOT,
  certificateBound,
  certificateThumbprint,
  configDir,
  createDpopKey,
  dpopBound,
  dpopProof,
  loadSigningKey,
  mintToken,
  PET_1,
} from '@chain/testkit';
import { createApp } from '../src/app.js';
import { TEST_FRAMEWORK } from '../../../test/support/service-config.js';

// Sender-constrained tokens at the petstore over real sockets, with two-way TLS on: a token bound
// to a client certificate (RFC 8705) or to a DPoP key (RFC 9449), presented with and without
// what it is bound to, cached and not; each refusal with its exact status, body and challenge.

const CLIENTS = path.join(CERTS, 'clients');
const CA = fs.readFileSync(path.join(CERTS, 'ca.crt'));
const pem = (name: string) => {
  const file = fs.readFileSync(path.join(CLIENTS, `${name}.pem`));
  return { key: file, cert: file };
};
const API_A = pem('api-a');
const OTHER = pem('client');
const API_A_THUMBPRINT = certificateThumbprint(fs.readFileSync(path.join(CLIENTS, 'api-a.crt')));
const signer = loadSigningKey(
  '100',
  path.join(CERTS, 'primary.key'),
  path.join(CERTS, 'primary.crt'),
);
const ALGS = 'algs="ES256 EdDSA PS256 RS256"';
const MISMATCH = {
  statusCode: 401,
  code: 'ERR20012',
  message: 'TOKEN_BINDING_MISMATCH',
  description:
    'Token in authorization header is bound to a client certificate or DPoP key that the request does not prove',
};
const bearerChallenge = (description: string) =>
  `Bearer realm="api", error="invalid_token", error_description="${description}"`;
const dpopChallenge = (error: string, description: string) =>
  `DPoP realm="api", error="${error}", error_description="${description}", ${ALGS}, Bearer realm="api"`;

const token = (claims: Record<string, unknown>) =>
  mintToken(signer, { scope: ['read:pets'], clientId: 'bound-client', claims });

interface Answer {
  status: number;
  challenge?: string;
  body: unknown;
}

/** GET /v2/pet/1 on a fresh connection presenting `client`'s certificate. */
function get(
  port: number,
  client: { key: Buffer; cert: Buffer },
  headers: Record<string, string | string[]>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v2/pet/1?with=query',
        ca: CA,
        servername: 'localhost',
        agent: false,
        headers,
        ...client,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            challenge: res.headers['www-authenticate'],
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function start(serverYml = ''): Promise<RunningService> {
  return startService({
    bundledDir: path.join(ROOT, 'services', 'petstore', 'config'),
    loaderOptions: {
      overrideDir: configDir({
        'server.yml': [
          'serviceId: bound-petstore',
          'ip: 127.0.0.1',
          'httpsPort: 0',
          `keyFile: ${CERTS}/server.key`,
          `certFile: ${CERTS}/server.crt`,
          'enableTwoWayTls: true',
          `truststoreName: ${CLIENTS}/ca.crt`,
          serverYml,
        ].join('\n'),
        'security.yml': [
          'enableVerifyJwt: true',
          'jwt:',
          '  certificate:',
          `    '100': ${CERTS}/primary.crt`,
        ].join('\n'),
      }),
    },
    logDestination: { write: () => undefined },
    createApp: (config, logger) =>
      createApp({ ...config, server: { ...config.server, framework: TEST_FRAMEWORK } }, logger),
  });
}

describe('bound tokens at the petstore, two-way TLS', () => {
  let running: RunningService;
  let port: number;
  beforeAll(async () => {
    running = await start();
    port = running.ports.https!;
  });
  afterAll(() => running.close());

  describe('certificate-bound (cnf x5t#S256 of api-a.crt)', () => {
    const refused = {
      status: 401,
      challenge: bearerChallenge(MISMATCH.description),
      body: MISMATCH,
    };

    it('verified with its certificate (200), then refused from the cache with another (401 ERR20012)', async () => {
      const bound = token(certificateBound(API_A_THUMBPRINT));
      const authorization = `Bearer ${bound}`;
      expect(await get(port, API_A, { authorization })).toEqual({ status: 200, body: PET_1 });
      expect(await get(port, OTHER, { authorization })).toEqual(refused);
      expect(await get(port, API_A, { authorization })).toEqual({ status: 200, body: PET_1 });
    });

    it('refused with another certificate before it was ever verified (401 ERR20012), then 200 with its own', async () => {
      const authorization = `Bearer ${token(certificateBound(API_A_THUMBPRINT))}`;
      expect(await get(port, OTHER, { authorization })).toEqual(refused);
      expect(await get(port, API_A, { authorization })).toEqual({ status: 200, body: PET_1 });
    });
  });

  describe('DPoP-bound (cnf jkt)', () => {
    const key = createDpopKey('ec');
    const bound = token(dpopBound(key));
    const proof = (extra: { htu?: string } = {}) =>
      dpopProof(key, {
        htm: 'GET',
        htu: `https://127.0.0.1:${port}/v2/pet/1`,
        accessToken: bound,
        ...extra,
      });

    it('a fresh proof: 200; the same proof again: 401 ERR20014', async () => {
      const headers = { authorization: `DPoP ${bound}`, dpop: proof() };
      expect(await get(port, OTHER, headers)).toEqual({ status: 200, body: PET_1 });
      expect(await get(port, OTHER, headers)).toEqual({
        status: 401,
        challenge: dpopChallenge(
          'invalid_dpop_proof',
          'DPoP proof of the token in authorization header was already used',
        ),
        body: {
          statusCode: 401,
          code: 'ERR20014',
          message: 'DPOP_PROOF_REPLAYED',
          description: 'DPoP proof of the token in authorization header was already used',
        },
      });
      expect(await get(port, OTHER, { ...headers, dpop: proof() })).toEqual({
        status: 200,
        body: PET_1,
      });
    });

    it('without a proof, with two, or with one for another URI: 401 ERR20013', async () => {
      const invalid = {
        status: 401,
        challenge: dpopChallenge(
          'invalid_dpop_proof',
          'DPoP proof of the token in authorization header is missing or invalid',
        ),
        body: {
          statusCode: 401,
          code: 'ERR20013',
          message: 'INVALID_DPOP_PROOF',
          description: 'DPoP proof of the token in authorization header is missing or invalid',
        },
      };
      const authorization = `DPoP ${bound}`;
      expect(await get(port, OTHER, { authorization })).toEqual(invalid);
      expect(await get(port, OTHER, { authorization, dpop: [proof(), proof()] })).toEqual(invalid);
      expect(
        await get(port, OTHER, {
          authorization,
          dpop: proof({ htu: `https://127.0.0.1:${port}/v2/pet/2` }),
        }),
      ).toEqual(invalid);
    });

    it("a proof for another service's origin with a Host (or X-Forwarded-Host, Forwarded) naming it: 401 ERR20013", async () => {
      const authorization = `DPoP ${bound}`;
      const forApiA = (host: Record<string, string>) =>
        get(port, OTHER, {
          authorization,
          dpop: proof({ htu: 'https://localhost:7441/v2/pet/1' }),
          ...host,
        });
      const named: Record<string, string>[] = [
        { host: 'localhost:7441' },
        { 'x-forwarded-host': 'localhost:7441', 'x-forwarded-proto': 'https' },
        { forwarded: 'host=localhost:7441;proto=https' },
      ];
      for (const headers of named) {
        expect(await forApiA(headers)).toMatchObject({ status: 401, body: { code: 'ERR20013' } });
      }
      // the token's scope allows the request: a proof for this service passes
      expect(await get(port, OTHER, { authorization, dpop: proof() })).toEqual({
        status: 200,
        body: PET_1,
      });
    });

    it('a proof whose htu has user info: 401 ERR20013', async () => {
      const htu = `https://someone@127.0.0.1:${port}/v2/pet/1`;
      expect(
        await get(port, OTHER, { authorization: `DPoP ${bound}`, dpop: proof({ htu }) }),
      ).toMatchObject({ status: 401, body: { code: 'ERR20013' } });
    });

    it('sent as Bearer: 401 ERR20012 with the Bearer error and the DPoP challenge', async () => {
      for (const dpop of [undefined, proof()]) {
        expect(
          await get(port, OTHER, {
            authorization: `Bearer ${bound}`,
            ...(dpop ? { dpop } : {}),
          }),
        ).toEqual({
          status: 401,
          challenge: `${bearerChallenge(MISMATCH.description)}, DPoP realm="api", ${ALGS}`,
          body: MISMATCH,
        });
      }
    });

    it("as a hop's X-Scope-Token: DPoP <token> with its proof in X-Scope-Token-DPoP", async () => {
      const caller = mintToken(signer, { scope: [], clientId: 'user' });
      const headers = {
        authorization: `Bearer ${caller}`,
        'x-scope-token': `DPoP ${bound}`,
        'x-scope-token-dpop': proof(),
      };
      expect(await get(port, API_A, headers)).toEqual({ status: 200, body: PET_1 });
      expect(await get(port, API_A, headers)).toEqual({
        status: 401,
        challenge: dpopChallenge(
          'invalid_dpop_proof',
          'DPoP proof of the token in X-Scope-Token header was already used',
        ),
        body: {
          statusCode: 401,
          code: 'ERR20014',
          message: 'DPOP_PROOF_REPLAYED',
          description: 'DPoP proof of the token in X-Scope-Token header was already used',
        },
      });
    });

    it('unbound bearer tokens are served as before', async () => {
      const plain = mintToken(signer, { scope: ['read:pets'] });
      expect(await get(port, OTHER, { authorization: `Bearer ${plain}` })).toEqual({
        status: 200,
        body: PET_1,
      });
    });
  });
});

(TEST_FRAMEWORK === 'native' ? describe : describe.skip)('DPoP over HTTP/2 (:authority)', () => {
  let running: RunningService;
  beforeAll(async () => {
    running = await start('enableHttp2: true');
  });
  afterAll(() => running.close());

  it("htu names one of the service's own origins; the :authority the client sent counts for nothing", async () => {
    const port = running.ports.https!;
    const key = createDpopKey('ed25519');
    const bound = token(dpopBound(key));
    const session = http2.connect(`https://localhost:${port}`, { ca: CA, ...API_A });
    try {
      const status = (htu: string, authority = `localhost:${port}`) =>
        new Promise<number>((resolve, reject) => {
          const stream = session.request({
            ':path': '/v2/pet/1',
            ':authority': authority,
            authorization: `DPoP ${bound}`,
            dpop: dpopProof(key, { htm: 'GET', htu, accessToken: bound }),
          });
          let code = 0;
          stream.on('response', (h) => (code = Number(h[':status'])));
          stream.on('data', () => undefined);
          stream.on('end', () => resolve(code));
          stream.on('error', reject);
        });
      expect(await status(`https://localhost:${port}/v2/pet/1`)).toBe(200);
      // a name of its certificate, on its port
      expect(await status(`https://127.0.0.1:${port}/v2/pet/1`)).toBe(200);
      // another service's origin, with an :authority naming it
      expect(await status('https://localhost:7441/v2/pet/1', 'localhost:7441')).toBe(401);
      expect(await status(`https://evil.example:${port}/v2/pet/1`, `evil.example:${port}`)).toBe(
        401,
      );
    } finally {
      session.close();
    }
  });
});
