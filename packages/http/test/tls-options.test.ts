import fs from 'node:fs';
import tls from 'node:tls';
import path from 'node:path';
import { CERTS } from '@chain/testkit';
import type { ClientConfig } from '@chain/oauth-client';
import { Downstream } from '../src/index.js';
import { tlsOptions } from '../src/http-client.js';
import {
  closeClients,
  loadedTls,
  httpsServer,
  send,
  testClient,
  type TestServer,
} from '../../oauth-client/test/support/https-server.js';

const cert = (name: string) => fs.readFileSync(path.join(CERTS, name));

const TLS: Partial<ClientConfig['tls']> = {
  verifyHostname: true,
  loadDefaultTrustStore: false,
  loadTrustStore: true,
  trustStore: path.join(CERTS, 'ca.crt'),
  loadKeyStore: false,
  keyStore: path.join(CERTS, 'client.pem'),
};

describe('tlsOptions', () => {
  const tlsOptionsOf = (tls: Partial<ClientConfig['tls']>) => tlsOptions(loadedTls(tls));

  it('reads the trust store and, for two-way TLS, the key and certificate of the key store', () => {
    const one = tlsOptionsOf(TLS);
    expect(one.ca).toBe(cert('ca.crt').toString());
    expect(one.key).toBeUndefined();
    expect(one.cert).toBeUndefined();
    expect(one.checkServerIdentity).toBeUndefined();

    const two = tlsOptionsOf({ ...TLS, loadKeyStore: true });
    expect(two.key).toMatch(/^-----BEGIN (RSA |EC )?PRIVATE KEY-----/);
    expect(two.key).not.toContain('CERTIFICATE');
    expect(two.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(two.cert).not.toContain('PRIVATE KEY');
  });

  it('no trust store gives the system CAs; loadDefaultTrustStore adds them to the trust store', () => {
    expect(tlsOptionsOf({ ...TLS, loadTrustStore: false })).toEqual({ rejectUnauthorized: true });
    const both = tlsOptionsOf({ ...TLS, loadDefaultTrustStore: true });
    expect(both.ca).toEqual([...tls.rootCertificates, cert('ca.crt').toString()]);
    expect(tlsOptionsOf({ ...TLS, tlsVersion: 'TLSv1.3' }).minVersion).toBe('TLSv1.3');
  });

  it('verifyHostname: false skips only the name check', () => {
    const opts = tlsOptionsOf({ ...TLS, verifyHostname: false });
    expect(
      opts.checkServerIdentity?.('some-other-name', {} as tls.PeerCertificate),
    ).toBeUndefined();
    expect(opts.rejectUnauthorized).toBe(true);
  });
});

describe('two-way TLS: a downstream that demands a client certificate', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await httpsServer((_req, res) => send(res, 200, ['API D: Message 1']), {
      requestCert: true,
      rejectUnauthorized: true,
      ca: cert('ca.crt'),
    });
  });
  afterAll(() => server.close());
  afterEach(closeClients);

  const call = (t: Partial<ClientConfig['tls']>) =>
    new Downstream({
      name: 'api-d',
      url: `https://localhost:${server.port}/v1/data`,
      timeoutMs: 2000,
      transport: testClient({ tls: t }),
    }).getJson({});

  it('succeeds with loadKeyStore: true (certs/client.pem)', async () => {
    await expect(call({ ...TLS, loadKeyStore: true })).resolves.toEqual({
      status: 200,
      body: ['API D: Message 1'],
    });
  });

  it('fails without the key store: ERR20002, the handshake error as cause', async () => {
    const err = await call(TLS).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'ERR20002',
      body: {
        statusCode: 502,
        code: 'ERR20002',
        message: 'DOWNSTREAM_UNAVAILABLE',
        description: 'Downstream service api-d could not be reached',
      },
    });
    expect((err as Error).cause).toBeDefined();
  });

  it('hostname verification: a name not in the certificate is refused unless verifyHostname is false', async () => {
    // 127.0.0.2 is a loopback address the dev certificate does not name (it has 127.0.0.1).
    const other = await httpsServer((_req, res) => send(res, 200, ['ok']), {}, '127.0.0.2');
    try {
      const get = (verifyHostname: boolean) =>
        new Downstream({
          name: 'api-d',
          url: `${other.url}/v1/data`,
          timeoutMs: 2000,
          transport: testClient({ tls: { verifyHostname } }),
        }).getJson({});
      const err = await get(true).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ERR20002' });
      expect((err as Error).cause).toMatchObject({
        code: 'network',
        cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
      });
      await expect(get(false)).resolves.toEqual({ status: 200, body: ['ok'] });
    } finally {
      await other.close();
    }
  });
});
