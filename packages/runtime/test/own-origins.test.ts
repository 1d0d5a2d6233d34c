import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CERTS } from '@chain/testkit';
import { ownOrigins } from '../src/own-origins.js';

// The origins a DPoP proof's htu may name when security.yml dpop.origins is empty: read from the
// service's own certificate and server.yml, on the port it listens on.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'own-origins-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate with this subject and these subject alternative names. */
function certificate(subject: string, names?: string) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  args.push('-nodes', '-keyout', key, '-out', cert, '-subj', subject, '-days', '1');
  if (names) args.push('-addext', `subjectAltName=${names}`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
}

const devServer = {
  key: fs.readFileSync(path.join(CERTS, 'server.key')),
  cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
};

describe('ownOrigins', () => {
  it("the development certificate's names on the port, IPv6 in brackets, each once", () => {
    expect(ownOrigins('https', 7442, '0.0.0.0', devServer)).toEqual([
      'https://localhost:7442',
      'https://127.0.0.1:7442',
      'https://[::1]:7442',
      'https://api-a:7442',
      'https://api-b:7442',
      'https://api-c:7442',
      'https://api-d:7442',
      'https://petstore:7442',
      'https://oauth2-token:7442',
      'https://oauth2-key:7442',
      'https://influxdb:7442',
    ]);
  });

  it('server.yml ip when it is one address; the default port left out, as htu is compared', () => {
    const only = certificate('/CN=api-b.example', 'DNS:api-b.example');
    expect(ownOrigins('https', 443, '10.1.2.3', only)).toEqual([
      'https://api-b.example',
      'https://10.1.2.3',
    ]);
    expect(ownOrigins('https', 8443, '::', only)).toEqual(['https://api-b.example:8443']);
  });

  it('no subject alternative name: the common name; wildcards are never an origin', () => {
    expect(ownOrigins('https', 7441, '0.0.0.0', certificate('/CN=Api-A.Example'))).toEqual([
      'https://api-a.example:7441',
    ]);
    const wild = certificate('/CN=*.example', 'DNS:*.example,DNS:api.example');
    expect(ownOrigins('https', 7441, '0.0.0.0', wild)).toEqual(['https://api.example:7441']);
    expect(ownOrigins('https', 7441, '0.0.0.0', certificate('/CN=*.example'))).toEqual([
      'https://localhost:7441',
      'https://127.0.0.1:7441',
      'https://[::1]:7441',
    ]);
  });

  it('a common name that is no host name is left out', () => {
    expect(ownOrigins('https', 7441, '127.0.0.1', certificate('/CN=my server/O=x'))).toEqual([
      'https://127.0.0.1:7441',
    ]);
  });

  it('a PKCS12 keystore is read the same way', () => {
    const pem = certificate('/CN=store.example', 'DNS:store.example,IP:192.0.2.7');
    fs.writeFileSync(path.join(dir, 'k.pem'), pem.key);
    fs.writeFileSync(path.join(dir, 'c.pem'), pem.cert);
    const p12 = path.join(dir, 'store.p12');
    execFileSync(
      'openssl',
      [
        'pkcs12',
        '-export',
        '-inkey',
        path.join(dir, 'k.pem'),
        '-in',
        path.join(dir, 'c.pem'),
        '-out',
        p12,
        '-passout',
        'pass:changeit',
      ],
      { stdio: 'ignore' },
    );
    expect(
      ownOrigins('https', 9443, '0.0.0.0', { pfx: fs.readFileSync(p12), passphrase: 'changeit' }),
    ).toEqual(['https://store.example:9443', 'https://192.0.2.7:9443']);
  });

  it('plain HTTP without a certificate: the one address, else the loopback names', () => {
    expect(ownOrigins('http', 8080, '192.0.2.1', undefined)).toEqual(['http://192.0.2.1:8080']);
    expect(ownOrigins('http', 80, '0.0.0.0', undefined)).toEqual([
      'http://localhost',
      'http://127.0.0.1',
      'http://[::1]',
    ]);
  });
});
