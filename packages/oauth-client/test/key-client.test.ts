import fs from 'node:fs';
import path from 'node:path';
import { createSigningKey, startKeyServer, type KeyServer } from '@chain/testkit';
import { createKeyClient, KeyFetchError } from '../src/key-client';
import { createHttpsAgent } from '../src/tls-options';
import type { ClientConfig } from '../src/client-config';

const CERTS = path.resolve(__dirname, '..', '..', '..', 'certs');
const rotated = createSigningKey('200');
const agent = createHttpsAgent({
  verifyHostname: true,
  loadTrustStore: true,
  trustStore: path.join(CERTS, 'ca.crt'),
  loadKeyStore: false,
});

let server: KeyServer;
beforeAll(async () => {
  server = await startKeyServer({
    tls: {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
    },
    clientId: 'key-client',
    clientSecret: 'key-secret',
    keys: { '200': rotated.certificatePem },
  });
});
afterAll(async () => {
  await server.stop();
  agent.destroy();
});
beforeEach(() => {
  server.mode = 'serve';
  server.requests.length = 0;
});

function keyConfig(
  overrides: Partial<ClientConfig['oauth']['key']> = {},
): ClientConfig['oauth']['key'] {
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

describe('createKeyClient (light-oauth2 PEM protocol)', () => {
  const fetchKey = () =>
    createKeyClient({ key: keyConfig(), secret: 'key-secret', httpsAgent: agent, timeoutMs: 2000 });

  it('GETs {server_url}{uri}/{kid} with Basic client_id:keyClientSecret and answers the PEM', async () => {
    await expect(fetchKey()('200')).resolves.toBe(rotated.certificatePem);
    expect(server.requests).toEqual(['/oauth2/key/200']);
  });

  it('answers undefined for a kid the server does not know', async () => {
    await expect(fetchKey()('404-kid')).resolves.toBeUndefined();
  });

  it('encodes the kid into one path segment', async () => {
    await fetchKey()('a b');
    expect(server.requests).toEqual(['/oauth2/key/a%20b']);
  });

  it('fails without naming the secret when the credentials are refused', async () => {
    const wrong = createKeyClient({
      key: keyConfig(),
      secret: 'wrong-secret',
      httpsAgent: agent,
      timeoutMs: 2000,
    });
    const message = await failure(wrong('200'));
    expect(message).toBe(`key server ${server.url}/oauth2/key answered HTTP 401`);
    expect(message).not.toMatch(/secret/);
  });

  it('fails on a 500 and on an answer that is not PEM', async () => {
    server.mode = 'fail';
    expect(await failure(fetchKey()('200'))).toBe(
      `key server ${server.url}/oauth2/key answered HTTP 500`,
    );
    server.mode = 'serve';
    server.keys.set('junk', 'hello');
    expect(await failure(fetchKey()('junk'))).toBe(
      `key server ${server.url}/oauth2/key did not answer a PEM key`,
    );
    server.keys.delete('junk');
  });

  it('fails within its time-out when the server does not answer', async () => {
    server.mode = 'hang';
    const client = createKeyClient({
      key: keyConfig(),
      secret: 'key-secret',
      httpsAgent: agent,
      timeoutMs: 100,
    });
    const started = Date.now();
    expect(await failure(client('200'))).toBe(
      `key server ${server.url}/oauth2/key could not be reached (ECONNABORTED)`,
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fails when the server is down', async () => {
    const client = createKeyClient({
      key: keyConfig({ server_url: 'https://localhost:1' }),
      secret: 'key-secret',
      httpsAgent: agent,
      timeoutMs: 1000,
    });
    expect(await failure(client('200'))).toBe(
      'key server https://localhost:1/oauth2/key could not be reached (ECONNREFUSED)',
    );
  });

  it('sends no Authorization without a secret', async () => {
    const client = createKeyClient({ key: keyConfig(), httpsAgent: agent, timeoutMs: 1000 });
    expect(await failure(client('200'))).toMatch(/HTTP 401$/);
  });

  it('needs a server_url', () => {
    expect(() =>
      createKeyClient({
        key: keyConfig({ server_url: undefined }),
        httpsAgent: agent,
        timeoutMs: 1,
      }),
    ).toThrow('client.yml oauth.key.server_url is not set');
  });
});

describe('createKeyClient (JWKS through jwks-rsa, oauth.key.jwk: true)', () => {
  const client = () =>
    createKeyClient({
      key: keyConfig({ jwk: true }),
      secret: 'key-secret',
      httpsAgent: agent,
      timeoutMs: 2000,
    });

  it('answers the public key of the kid from the JWKS', async () => {
    const pem = await client()('200');
    expect(pem).toBe(rotated.publicKey.export({ type: 'spki', format: 'pem' }));
    expect(server.requests).toEqual(['/oauth2/key']);
  });

  it('answers undefined for a kid the JWKS does not hold', async () => {
    await expect(client()('nope')).resolves.toBeUndefined();
  });

  it('fails when the JWKS cannot be read', async () => {
    server.mode = 'fail';
    expect(await failure(client()('200'))).toBe(
      `key server ${server.url}/oauth2/key JWKS could not be read (JwksError)`,
    );
  });
});
