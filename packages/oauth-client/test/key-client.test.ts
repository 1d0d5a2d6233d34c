import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createSigningKey, startKeyServer, type KeyServer } from '@chain/testkit';
import type { KeySource } from '@chain/security';
import { createKeyClient, KeyFetchError } from '../src/key-client.js';
import type { KeyClientOptions } from '../src/key-client.js';
import { closeClients, testClient } from './support/https-server.js';

const CERTS = path.resolve(import.meta.dirname, '..', '..', '..', 'certs');
const TLS = {
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
};
const rotated = createSigningKey('200');
const ec = createSigningKey('201', { type: 'ec' });
const http = testClient();

let server: KeyServer;
beforeAll(async () => {
  server = await startKeyServer({
    tls: TLS,
    clientId: 'key-client',
    clientSecret: 'key-secret',
    keys: { '200': rotated.certificatePem, '201': ec.certificatePem },
  });
});
afterAll(async () => {
  await server.stop();
  await closeClients();
});
beforeEach(() => {
  server.mode = 'serve';
  server.requests.length = 0;
});

function keyConfig(overrides: Partial<KeyClientOptions['key']> = {}): KeyClientOptions['key'] {
  return {
    server_url: server.url,
    uri: '/oauth2/key',
    client_id: 'key-client',
    jwk: false,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KeyFetchError);
  return (err as Error).message;
}

function byKid(source: KeySource) {
  if (source.kind !== 'kid') throw new Error('expected a key source by kid');
  return source.fetch;
}

function keySet(source: KeySource) {
  if (source.kind !== 'set') throw new Error('expected a key set source');
  return source.fetch;
}

describe('createKeyClient (light-oauth2 PEM protocol)', () => {
  const fetchKey = (secret = 'key-secret', key = keyConfig()) =>
    byKid(createKeyClient({ key, secret, http, timeoutMs: 2000 }));

  it('GETs {server_url}{uri}/{kid} with Basic client_id:secret and answers the PEM', async () => {
    await expect(fetchKey()('200')).resolves.toBe(rotated.certificatePem);
    expect(server.requests).toEqual(['/oauth2/key/200']);
  });

  it("answers undefined (no such kid) for light-oauth2's 400 ERR12030 and 404 ERR12017 (defect: 400 was a key server failure)", async () => {
    // light-oauth2 answers its own unknown kid 400 ERR12030, another provider's 404 ERR12017
    await expect(fetchKey()('999')).resolves.toBeUndefined();
    await expect(fetchKey()('made-up-kid')).resolves.toBeUndefined();
    expect(server.requests).toEqual(['/oauth2/key/999', '/oauth2/key/made-up-kid']);
  });

  it('encodes the kid into one path segment', async () => {
    await fetchKey()('a b');
    expect(server.requests).toEqual(['/oauth2/key/a%20b']);
  });

  it('fails without naming the secret when the credentials are refused (401, or 404 ERR12014 client not found)', async () => {
    const message = await failure(fetchKey('wrong-secret')('200'));
    expect(message).toBe(`key server ${server.url}/oauth2/key answered HTTP 401`);
    expect(message).not.toMatch(/secret/);
    expect(await failure(fetchKey('key-secret', keyConfig({ client_id: 'nobody' }))('200'))).toBe(
      `key server ${server.url}/oauth2/key answered HTTP 404`,
    );
  });

  it('fails on a 500 and on an answer that is not PEM', async () => {
    server.mode = 'fail';
    expect(await failure(fetchKey()('200'))).toBe(
      `key server ${server.url}/oauth2/key answered HTTP 500`,
    );
    server.mode = 'serve';
    server.keys.set('jnk', 'hello');
    expect(await failure(fetchKey()('jnk'))).toBe(
      `key server ${server.url}/oauth2/key did not answer a PEM key`,
    );
    server.keys.delete('jnk');
  });

  it('fails on a 400 that is not ERR12030', async () => {
    const other = https.createServer(TLS, (_req, res) => {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end('{"statusCode":400,"code":"ERR11004","message":"VALIDATOR_SCHEMA"}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://localhost:${(other.address() as AddressInfo).port}`;
      expect(await failure(fetchKey('s', keyConfig({ server_url: url }))('200'))).toBe(
        `key server ${url}/oauth2/key answered HTTP 400`,
      );
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('fails within its time-out when the server does not answer', async () => {
    server.mode = 'hang';
    const client = byKid(
      createKeyClient({
        key: keyConfig(),
        secret: 'key-secret',
        http,
        timeoutMs: 100,
      }),
    );
    const started = Date.now();
    expect(await failure(client('200'))).toBe(
      `key server ${server.url}/oauth2/key did not answer within 100 ms`,
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fails when the server is down', async () => {
    const client = fetchKey('key-secret', keyConfig({ server_url: 'https://localhost:1' }));
    expect(await failure(client('200'))).toBe(
      'key server https://localhost:1/oauth2/key could not be reached (ECONNREFUSED)',
    );
  });

  it('sends no Authorization without a secret (light-oauth2: 401 ERR12002)', async () => {
    const client = byKid(createKeyClient({ key: keyConfig(), http, timeoutMs: 1000 }));
    expect(await failure(client('200'))).toMatch(/HTTP 401$/);
  });
});

describe('createKeyClient (a JWKS)', () => {
  const client = () =>
    keySet(
      createKeyClient({
        key: keyConfig(),
        jwks: true,
        secret: 'key-secret',
        http,
        timeoutMs: 2000,
      }),
    );

  it('answers every signing key of the set with its JWK and alg, in one request', async () => {
    const set = await client()();
    expect([...set.keys()]).toEqual(['200', '201']);
    expect(set.get('200')).toEqual({
      material: {
        ...rotated.publicKey.export({ format: 'jwk' }),
        kid: '200',
        alg: 'RS256',
        use: 'sig',
      },
      alg: 'RS256',
    });
    expect(server.requests).toEqual(['/oauth2/key']);
  });

  it('leaves out keys without a kid or not for signatures; an empty set is an answer', async () => {
    const other = https.createServer(TLS, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          keys: [
            { kty: 'RSA', use: 'sig' },
            { kty: 'RSA', kid: 'e', use: 'enc' },
            null,
            { kty: 'OKP', kid: 'x' },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://localhost:${(other.address() as AddressInfo).port}`;
      const set = await keySet(
        createKeyClient({
          key: keyConfig({ server_url: url }),
          jwks: true,
          http,
          timeoutMs: 2000,
        }),
      )();
      expect([...set.keys()]).toEqual(['x']);
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('fails when the JWKS cannot be read, or is not a JWKS', async () => {
    server.mode = 'fail';
    expect(await failure(client()())).toBe(`key server ${server.url}/oauth2/key answered HTTP 500`);
    let body = '{"not":"a jwks"}';
    const other = https.createServer(TLS, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://localhost:${(other.address() as AddressInfo).port}`;
      const fetchSet = keySet(
        createKeyClient({ key: keyConfig({ server_url: url }), jwks: true, http, timeoutMs: 2000 }),
      );
      for (const notJwks of ['{"not":"a jwks"}', '<html>keys</html>', 'null']) {
        body = notJwks;
        expect(await failure(fetchSet())).toBe(
          `key server ${url}/oauth2/key did not answer a JWKS`,
        );
      }
      // A set past 1 MiB is not read whole.
      body = JSON.stringify({ keys: [{ kid: 'x', n: 'n'.repeat(1024 * 1024) }] });
      const err = await fetchSet().catch((e: unknown) => e);
      expect(err).toMatchObject({
        message: `key server ${url}/oauth2/key answered more than 1048576 bytes`,
        cause: { code: 'body_too_large' },
      });
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('fails when the key server is down, the transport failure as cause', async () => {
    const down = keySet(
      createKeyClient({
        key: keyConfig({ server_url: 'https://localhost:1' }),
        jwks: true,
        http,
        timeoutMs: 1000,
      }),
    );
    const err = await down().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyFetchError);
    expect(err).toMatchObject({
      message: 'key server https://localhost:1/oauth2/key could not be reached (ECONNREFUSED)',
      cause: { code: 'network', cause: { code: 'ECONNREFUSED' } },
    });
  });
});

describe('createKeyClient: each look-up told to the metrics', () => {
  it('key, no such kid and failed by PEM; key_set and failed for a JWKS', async () => {
    const outcomes: string[] = [];
    const events = { keyFetched: ({ outcome }: { outcome: string }) => outcomes.push(outcome) };
    const pem = byKid(
      createKeyClient({
        key: keyConfig(),
        secret: 'key-secret',
        http,
        timeoutMs: 1000,
        events,
      }),
    );
    await expect(pem('200')).resolves.toContain('BEGIN CERTIFICATE');
    await expect(pem('999')).resolves.toBeUndefined();
    server.mode = 'fail';
    await failure(pem('200'));
    server.mode = 'serve';
    const set = keySet(
      createKeyClient({
        key: keyConfig(),
        secret: 'key-secret',
        jwks: true,
        http,
        timeoutMs: 1000,
        events,
      }),
    );
    await expect(set()).resolves.toBeInstanceOf(Map);
    server.mode = 'fail';
    await failure(set());
    expect(outcomes).toEqual(['key', 'no_such_kid', 'failed', 'key_set', 'failed']);
  });
});
