import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { loadServiceConfig } from '../src/index.js';
import { serverConfigSchema } from '../src/server-config.js';
import { configDir } from '@chain/testkit';
import { FIXTURE } from './support.js';

const CERTS = path.resolve(import.meta.dirname, '..', '..', '..', 'certs');

function folder(files: Record<string, string | Buffer>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-yml-'));
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

function load(yaml: string, files: Record<string, string | Buffer> = {}) {
  const dir = folder({ 'server.yml': yaml, ...files });
  const loader = new ConfigLoader({ bundledDir: dir, env: {} });
  return { dir, loader, config: () => loader.load('server', serverConfigSchema) };
}

function error(yaml: string, files: Record<string, string | Buffer> = {}): ConfigError {
  try {
    load(yaml, files).config();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** The error of server.yml's TLS files, read when server.yml loads. */
function tlsError(yaml: string, files: Record<string, string | Buffer> = {}): ConfigError {
  const { dir } = load(yaml, files);
  try {
    loadServiceConfig({ bundledDir: FIXTURE, overrideDir: dir });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const pkcs12 = (password: string) =>
  execFileSync('openssl', [
    'pkcs12',
    '-export',
    '-in',
    path.join(CERTS, 'server.crt'),
    '-inkey',
    path.join(CERTS, 'server.key'),
    '-passout',
    `pass:${password}`,
  ]);

const PEM = `keyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;

describe('server.yml', () => {
  it("serves HTTPS from light-4j's PKCS12 keystore", () => {
    const { dir, config } = load(
      'serviceId: s\nkeystoreName: server.keystore\nkeystorePass: secret\n',
      {
        'server.keystore': pkcs12('secret'),
      },
    );
    expect(config()).toMatchObject({
      keystoreName: path.join(dir, 'server.keystore'),
      keystorePass: 'secret',
    });
    const { tls } = loadServiceConfig({ bundledDir: FIXTURE, overrideDir: dir }).server;
    expect(tls).toEqual({
      pfx: fs.readFileSync(path.join(dir, 'server.keystore')),
      passphrase: 'secret',
    });
  });

  it('refuses a JKS keystore, a wrong password and a missing keystore, naming the key', () => {
    const jks = Buffer.concat([Buffer.from([0xfe, 0xed, 0xfe, 0xed]), Buffer.alloc(32)]);
    const jksError = tlsError('serviceId: s\nkeystoreName: server.keystore\n', {
      'server.keystore': jks,
    });
    expect(jksError.key).toBe('keystoreName');
    expect(jksError.reason).toMatch(
      /server\.keystore is a JKS keystore; convert it to PKCS12 \(keytool -importkeystore -deststoretype pkcs12\) or give keyFile and certFile$/,
    );
    expect(
      tlsError('serviceId: s\nkeystoreName: server.keystore\nkeystorePass: wrong\n', {
        'server.keystore': pkcs12('secret'),
      }).reason,
    ).toMatch(/cannot be opened as a PKCS12 keystore with keystorePass$/);
    expect(tlsError('serviceId: s\nkeystoreName: nope.keystore\n').reason).toMatch(
      /^file not found: .*nope\.keystore$/,
    );
  });

  it('asks for keyFile and certFile (or a keystore) with enableHttps', () => {
    const err = error('serviceId: s\n');
    expect(err.key).toBe('keyFile');
    expect(err.reason).toMatch(
      /^is required with enableHttps \(or give keystoreName, a PKCS12 keystore\)/,
    );
  });

  it('uses keyFile and certFile over a keystore, saying so', () => {
    const { loader, config } = load(`serviceId: s\nkeystoreName: server.keystore\n${PEM}`);
    expect(config().keystoreName).toBeUndefined();
    expect(loader.warnings.map((w) => `${w.key}: ${w.message}`)).toEqual([
      'keystoreName: ignored: keyFile and certFile serve HTTPS',
    ]);
  });

  it('serves HTTPS only when enableHttp and enableHttps are both true (light-4j), with a warning', () => {
    const { loader, config } = load(`serviceId: s\nenableHttp: true\n${PEM}`);
    expect(config()).toMatchObject({ enableHttps: true, enableHttp: false });
    expect(loader.warnings[0].message).toBe(
      'ignored: with enableHttps true only HTTPS is served (as light-4j)',
    );
    expect(load('serviceId: s\nenableHttps: false\nenableHttp: true\n').config()).toMatchObject({
      enableHttps: false,
      enableHttp: true,
    });
  });

  it("reads light-4j's shutdownGracefulPeriod as shutdownTimeoutMs, and warns for its other keys", () => {
    const { loader, config } = load(
      `serviceId: s\nshutdownGracefulPeriod: 2000\nioThreads: 4\ndynamicPort: false\n${PEM}`,
    );
    expect(config().shutdownTimeoutMs).toBe(2000);
    expect(loader.warnings.map((w) => w.key)).toEqual(['ioThreads']);
  });

  it('stops on a misspelled key with the closest known one', () => {
    expect(error(`serviceId: s\nhttpsport: 1\n${PEM}`).reason).toBe(
      'unknown key; did you mean "httpsPort"?',
    );
  });
});

const loadFixture = (serverYml: string) =>
  loadServiceConfig({ bundledDir: FIXTURE, overrideDir: configDir({ 'server.yml': serverYml }) });

describe('server.yml: our keys (framework, header size, time-outs)', () => {
  it('has the documented defaults', () => {
    expect(loadFixture('serviceId: s\nenableHttps: false\n').server).toEqual({
      serviceId: 's',
      ip: '0.0.0.0',
      httpsPort: 8443,
      enableHttps: false,
      httpPort: 8080,
      enableHttp: false,
      enableTwoWayTls: false,
      enableHttp2: false,
      framework: 'native',
      maxHeaderSize: 131072,
      headersTimeoutMs: 20000,
      requestTimeoutMs: 30000,
      keepAliveTimeoutMs: 72000,
      shutdownTimeoutMs: 10000,
      workers: 1,
    });
  });

  it('takes workers as a whole number, or auto: one per core', () => {
    const workers = (value: string) =>
      loadFixture(`serviceId: s\nenableHttps: false\nworkers: ${value}\n`).server.workers;
    expect(workers('3')).toBe(3);
    expect(workers('64')).toBe(64);
    expect(workers('auto')).toBe(Math.min(os.availableParallelism(), 64));
  });

  it.each([
    ['framework: koa', 'framework": Invalid option: expected one of "native"|"express"'],
    ['headersTimeoutMs: 40000', 'headersTimeoutMs": must not be longer than requestTimeoutMs'],
    ['keepAliveTimeoutMs: 0', 'keepAliveTimeoutMs": Too small: expected number to be >=1'],
    ['maxHeaderSize: 100', 'maxHeaderSize": Too small: expected number to be >=1024'],
    ['enableHttps: true', 'keyFile": is required with enableHttps'],
    [
      'workers: 0',
      'workers": must be a whole number from 1 to 64, or "auto" (one per core); got 0',
    ],
    [
      'workers: 2.5',
      'workers": must be a whole number from 1 to 64, or "auto" (one per core); got 2.5',
    ],
    [
      'workers: "4"',
      'workers": must be a whole number from 1 to 64, or "auto" (one per core); got "4"',
    ],
    [
      'workers: all',
      'workers": must be a whole number from 1 to 64, or "auto" (one per core); got "all"',
    ],
  ])('refuses %s, naming the key', (line, message) => {
    const base = line.startsWith('enableHttps')
      ? 'serviceId: s\n'
      : 'serviceId: s\nenableHttps: false\n';
    expect(() => loadFixture(`${base}${line}\n`)).toThrow(
      new RegExp(`server\\.yml at key "${message.replace(/[|()]/g, '\\$&')}`),
    );
  });
});

describe('server.yml enableTwoWayTls, truststoreName and probePort', () => {
  const CLIENT_CA = path.join(CERTS, 'clients', 'ca.crt');
  const HTTPS = `serviceId: s\nhttpsPort: 7441\n${PEM}`;

  it('reads the trust store as a PEM file of CA certificates, relative to the file', () => {
    const { dir, config } = load(`${HTTPS}enableTwoWayTls: true\ntruststoreName: clients.pem\n`, {
      'clients.pem': fs.readFileSync(CLIENT_CA),
    });
    expect(config()).toMatchObject({
      enableTwoWayTls: true,
      truststoreName: path.join(dir, 'clients.pem'),
    });
    expect(loadServiceConfig({ bundledDir: FIXTURE, overrideDir: dir }).server.tls).toMatchObject({
      requestCert: true,
      rejectUnauthorized: true,
      ca: fs.readFileSync(CLIENT_CA),
    });
  });

  it('enableTwoWayTls without a trust store stops the start, naming the file and the key', () => {
    const { dir, config } = load(`${HTTPS}enableTwoWayTls: true\n`);
    expect(config).toThrow(
      `Config error in ${dir}/server.yml at key "truststoreName": is required with enableTwoWayTls: the PEM file of the CA certificates that a client certificate must chain to`,
    );
  });

  it('refuses a trust store that is not PEM certificates, naming the key and what to do', () => {
    const jks = Buffer.concat([Buffer.from([0xfe, 0xed, 0xfe, 0xed]), Buffer.alloc(32)]);
    const two = `${HTTPS}enableTwoWayTls: true\ntruststoreName: server.truststore\n`;
    const jksError = tlsError(two, { 'server.truststore': jks });
    expect(jksError.key).toBe('truststoreName');
    expect(jksError.reason).toMatch(
      /server\.truststore is a JKS trust store; export its CA certificates as PEM \(keytool -exportcert -rfc\)$/,
    );
    const p12 = execFileSync('openssl', [
      'pkcs12',
      '-export',
      '-nokeys',
      '-in',
      CLIENT_CA,
      '-passout',
      'pass:password',
    ]);
    expect(tlsError(two, { 'server.truststore': p12 }).reason).toMatch(
      /server\.truststore is not a PEM file of CA certificates \(a PKCS12 trust store\? export it with openssl pkcs12 -nokeys\)$/,
    );
    const broken = '-----BEGIN CERTIFICATE-----\nnot base64 DER\n-----END CERTIFICATE-----\n';
    expect(tlsError(two, { 'server.truststore': broken }).reason).toMatch(
      /server\.truststore holds a certificate that cannot be read$/,
    );
    expect(tlsError(`${HTTPS}enableTwoWayTls: true\ntruststoreName: nope.pem\n`)).toMatchObject({
      key: 'truststoreName',
      reason: expect.stringMatching(/^file not found: .*nope\.pem$/),
    });
  });

  it('enableTwoWayTls needs enableHttps', () => {
    const err = error(
      `serviceId: s\nenableHttps: false\nenableHttp: true\nenableTwoWayTls: true\ntruststoreName: ${CLIENT_CA}\n`,
    );
    expect(err).toMatchObject({
      key: 'enableTwoWayTls',
      reason: 'needs enableHttps: two-way TLS is a way of serving HTTPS',
    });
  });

  it("light-4j's trust store keys with two-way TLS off: one warning each, nothing read", () => {
    const { loader, config } = load(
      `${HTTPS}enableTwoWayTls: false\ntruststoreName: server.truststore\ntruststorePass: password\n`,
    );
    const server = config();
    expect(server.enableTwoWayTls).toBe(false);
    expect(server).not.toHaveProperty('truststoreName');
    expect(loader.warnings.map((w) => [w.key, w.message])).toEqual([
      [
        'truststorePass',
        'light-4j key not supported here; ignored (the trust store is a PEM file, read without a password)',
      ],
      ['truststoreName', 'ignored: enableTwoWayTls is false'],
    ]);
  });

  it('probePort: any port but the service port (0, any free port, is allowed beside port 0)', () => {
    expect(load(`${HTTPS}probePort: 9441\n`).config().probePort).toBe(9441);
    expect(load(`serviceId: s\nhttpsPort: 0\n${PEM}probePort: 0\n`).config().probePort).toBe(0);
    expect(error(`${HTTPS}probePort: 7441\n`)).toMatchObject({
      key: 'probePort',
      reason: 'must not be the port of the service itself (httpsPort)',
    });
    expect(error(`${HTTPS}probePort: 70000\n`).key).toBe('probePort');
  });
});
