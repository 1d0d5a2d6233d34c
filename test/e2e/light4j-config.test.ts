import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@chain/errors';
import { loadServiceConfig } from '@chain/runtime';
import { createApp as createChainApp } from '../../services/api-a/src/app.js';
import { loadSigningKey, mintToken, httpsRequest, CERTS, ROOT, startService } from '@chain/testkit';
import { silentLogger } from '../support/service-config.js';

/**
 * light-4j's own config files, and light-example-4j's ms_chain and petstore, dropped into
 * CONFIG_DIR (test/fixtures): every key does what light-4j does or loads with one start-up
 * warning naming the file and key. The folders get the certificates and the PKCS12 keystore
 * their files name.
 */
function fixture(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'light4j-fixture-'));
  fs.cpSync(path.join(ROOT, 'test', 'fixtures', name), dir, { recursive: true });
  fs.copyFileSync(path.join(CERTS, 'primary.crt'), path.join(dir, 'primary.crt'));
  fs.copyFileSync(path.join(CERTS, 'secondary.crt'), path.join(dir, 'secondary.crt'));
  // light-4j's trust store, here a PEM file of the CA under the name the file gives
  fs.copyFileSync(path.join(CERTS, 'ca.crt'), path.join(dir, 'client.truststore'));
  execFileSync('openssl', [
    'pkcs12',
    '-export',
    '-in',
    path.join(CERTS, 'server.crt'),
    '-inkey',
    path.join(CERTS, 'server.key'),
    '-passout',
    'pass:password',
    '-out',
    path.join(dir, 'server.keystore'),
  ]);
  return dir;
}

const load = (name: string, service: string, env: NodeJS.ProcessEnv = {}) => {
  const dir = fixture(name);
  const config = loadServiceConfig({
    bundledDir: path.join(ROOT, 'services', service, 'config'),
    overrideDir: dir,
    env,
  });
  const warnings = config.loader.warnings.map((w) => `${path.basename(w.file)} ${w.key}`);
  return { dir, config, warnings };
};

const SERVER_WARNINGS = ['server.yml keyPass', 'server.yml truststorePass'];
/** Read with enableTwoWayTls; with it false, ignored with a warning after the light-4j keys'. */
const TRUSTSTORE = 'server.yml truststoreName';
const LIGHT4J_SERVER = [
  ...SERVER_WARNINGS,
  'server.yml bootstrapStoreName',
  'server.yml bootstrapStorePass',
  'server.yml minPort',
  'server.yml maxPort',
];
const PEM_STORES = [
  'client.yml tls.trustStorePass',
  'client.yml tls.keyStorePass',
  'client.yml tls.keyPass',
];
const REQUEST = (keys: string[]) => keys.map((k) => `client.yml request.${k}`);

/** The warnings of light-4j's own files, in the order they are loaded. */
const LIGHT4J_WARNINGS = [
  ...LIGHT4J_SERVER,
  'server.yml buildNumber',
  'server.yml serviceName',
  'server.yml bufferSize',
  'server.yml ioThreads',
  'server.yml workerThreads',
  'server.yml backlog',
  'server.yml serverString',
  'server.yml maxTransferFileSize',
  TRUSTSTORE,
  'security.yml jwtCacheFullSize',
  ...PEM_STORES,
  'client.yml tls.defaultCertPassword',
  'client.yml oauth.token.cache',
  'client.yml oauth.token.enableHttp2',
  'client.yml oauth.token.key.enableHttp2',
  'client.yml oauth.sign',
  'client.yml oauth.deref',
  ...REQUEST([
    'connectionPoolSize',
    'connectionExpireTime',
    'maxReqPerConn',
    'maxConnectionNumPerHost',
    'minConnectionNumPerHost',
    'maxRequestRetry',
    'requestRetryDelay',
    'poolWarmUpSize',
    'healthCheckEnabled',
    'healthCheckIntervalMs',
  ]),
  'metrics.yml serverPath',
  'metrics.yml productName',
  'limit.yml clientIdKeyResolver',
  'limit.yml userIdKeyResolver',
  'limit.yml addressKeyResolver',
  'limit.yml queueSize',
  'limit.yml concurrentRequest',
];

describe("light-4j's own config files", () => {
  it('load, with one warning per light-4j key not supported here', () => {
    const { dir, config, warnings } = load('light-4j', 'petstore');
    expect(warnings).toEqual(LIGHT4J_WARNINGS);
    // and the keys that are implemented do what light-4j does
    expect(config.server).toMatchObject({
      serviceId: 'com.networknt.petstore-1.0.0',
      httpsPort: 8443,
      enableHttp: false,
      keystoreName: path.join(dir, 'server.keystore'),
      keystorePass: 'password',
      shutdownTimeoutMs: 2000,
    });
    expect(config.security).toMatchObject({
      enableVerifyJwt: true,
      enableExtractScopeToken: true,
      skipPathPrefixes: [],
      passThroughClaims: {},
      jwt: {
        certificate: {
          '100': path.join(dir, 'primary.crt'),
          '101': path.join(dir, 'secondary.crt'),
        },
        keyResolver: 'JsonWebKeySet',
      },
    });
    expect(config.client.tls).toMatchObject({ loadDefaultTrustStore: true, tlsVersion: 'TLSv1.3' });
    expect(config.client.oauth.key).toMatchObject({
      uri: '/oauth2/key',
      client_id: 'f7d42348-c647-4efb-a52d-4c5787421e72',
      client_secret: 'f6h1FTI8Q3-7UScPZDzfXA',
    });
    expect(config.metrics).toMatchObject({
      enabled: true,
      influxdbHost: 'localhost',
      influxdbUser: 'admin',
    });
    expect(config.prometheus).toEqual({ enabled: false, enableHotspot: false });
    expect(config.limit).toMatchObject({
      enabled: false,
      errorCode: 429,
      key: 'server',
      headersAlwaysSet: false,
      server: {},
      client: {},
    });
    expect(config.limit.rateLimit.map((q) => q.text)).toEqual(['10/s', '10000/d']);
  });

  it('take values.yml and the environment, as light-4j does', () => {
    const { config } = load('light-4j', 'petstore', {
      SERVER_HTTPSPORT: '9443',
      SECURITY_SKIPPATHPREFIXES: '/health,/docs',
      'security.passThroughClaims': '{"client_id":"X-Client-Id"}',
    });
    expect(config.server.httpsPort).toBe(9443);
    expect(config.security.skipPathPrefixes).toEqual(['/health', '/docs']);
    expect(config.security.passThroughClaims).toEqual({ client_id: 'X-Client-Id' });
  });

  it('start the petstore: the warnings once each at start, then tokens are verified', async () => {
    const dir = fixture('light-4j');
    const service = await startService('petstore', {
      configDir: dir,
      env: { SERVER_HTTPSPORT: '0', SERVER_IP: '127.0.0.1', METRICS_ENABLED: 'false' },
    });
    try {
      const warned = service.lines
        .map((l) => JSON.parse(l) as { level: number; msg: string; key?: string })
        .filter((l) => l.level === 40);
      // light-4j's enableVerifySwt: true beside enableVerifyJwt, with no introspection server in
      // client.yml: said when the app is built, after the light-4j keys of the files.
      expect(warned.length).toBe(LIGHT4J_WARNINGS.length + 1);
      expect(warned.filter((w) => w.key === 'enableVerifySwt').map((w) => w.msg)).toEqual([
        `${dir}/security.yml key "enableVerifySwt": no introspection server (client.yml oauth.introspection): only JWTs are verified, any other token is refused (ERR10000)`,
      ]);
      expect(warned[0].msg).toBe(
        `${dir}/server.yml key "keyPass": light-4j key not supported here; ignored (a PKCS12 keystore is opened with keystorePass)`,
      );
      expect(new Set(warned.map((w) => w.msg)).size).toBe(warned.length);
      const url = `https://localhost:${service.port}/v2/pet/1`;
      expect((await httpsRequest(url)).status).toBe(401);
      const primary = loadSigningKey(
        '100',
        path.join(CERTS, 'primary.key'),
        path.join(CERTS, 'primary.crt'),
      );
      const ok = await httpsRequest(url, {
        headers: { Authorization: `Bearer ${mintToken(primary, { scope: ['read:pets'] })}` },
      });
      expect(ok.status).toBe(200);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});

describe("light-example-4j's ms_chain api_a", () => {
  it('loads, with one warning per light-4j key not supported here', () => {
    const { warnings } = load('ms_chain/api_a', 'api-a');
    expect(warnings).toEqual([
      ...SERVER_WARNINGS,
      TRUSTSTORE,
      'server.yml enableHttp',
      ...PEM_STORES,
      'client.yml tls.defaultGroupKey',
      'client.yml tls.trustedNames',
      'client.yml oauth.token.cache',
      'client.yml oauth.token.enableHttp2',
      'client.yml oauth.token.key.enableHttp2',
      'client.yml oauth.sign',
      'client.yml oauth.deref',
      ...REQUEST([
        'connectionPoolSize',
        'maxReqPerConn',
        'maxConnectionNumPerHost',
        'minConnectionNumPerHost',
      ]),
      'secret.yml serverKeystorePass',
      'secret.yml serverKeyPass',
      'secret.yml serverTruststorePass',
      'secret.yml clientKeystorePass',
      'secret.yml clientKeyPass',
      'secret.yml clientTruststorePass',
      'secret.yml emailPassword',
    ]);
  });

  it('serves HTTPS only when enableHttp and enableHttps are both true, as light-4j', () => {
    const { config } = load('ms_chain/api_a', 'api-a');
    expect(config.server).toMatchObject({ enableHttps: true, httpsPort: 7441, enableHttp: false });
    expect(config.loader.warnings.find((w) => w.key === 'enableHttp')?.message).toBe(
      'ignored: with enableHttps true only HTTPS is served (as light-4j)',
    );
  });

  it('needs the token server URL light-4j would find by service discovery, naming file and key', () => {
    const { dir, config } = load('ms_chain/api_a', 'api-a');
    let err: unknown;
    try {
      createChainApp(config, silentLogger());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(
      `Config error in ${dir}/client.yml at key "oauth.token.server_url": is required when security.yml enableVerifyJwt is true`,
    );
  });
});

describe("light-example-4j's petstore", () => {
  it('loads openapi-security.yml instead of security.yml, values.yml included', () => {
    const { config, warnings } = load('petstore', 'petstore');
    expect(warnings).toEqual([
      ...LIGHT4J_SERVER,
      'server.yml environment',
      'server.yml buildNumber',
      TRUSTSTORE,
    ]);
    expect(config.security).toMatchObject({
      enableVerifyJwt: false,
      enableExtractScopeToken: true,
      jwt: { keyResolver: 'X509Certificate' },
    });
    expect(config.server.serviceId).toBe('com.networknt.petstore-3.0.1');
  });

  it('starts, warns that handler.yml is not read, and switches verification on from the environment', async () => {
    const dir = fixture('petstore');
    const env = { SERVER_HTTPSPORT: '0', SERVER_IP: '127.0.0.1' };
    const open = await startService('petstore', { configDir: dir, env });
    try {
      expect(
        open.lines.some((l) => l.includes(`"msg":"${dir}/handler.yml: not read by this service"`)),
      ).toBe(true);
      expect((await httpsRequest(`https://localhost:${open.port}/v2/pet/1`)).status).toBe(200);
    } finally {
      expect(await open.stop()).toBe(0);
    }
    const secured = await startService('petstore', {
      configDir: dir,
      env: { ...env, OPENAPI_SECURITY_ENABLEVERIFYJWT: 'true' },
    });
    try {
      const res = await httpsRequest(`https://localhost:${secured.port}/v2/pet/1`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'ERR10002' });
    } finally {
      expect(await secured.stop()).toBe(0);
    }
  });
});
