import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { configDir } from '@chain/testkit';
import {
  clientConfigSchema,
  clientSecrets,
  secretConfigSchema,
  type ClientConfig,
} from '../src/index.js';

const CA = path.resolve(import.meta.dirname, '..', '..', '..', 'certs', 'ca.crt');

function load(name: string, text: string, files: Record<string, string> = {}) {
  const dir = configDir({ [`${name}.yml`]: text, ...files });
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
  return {
    dir,
    loader,
    load: <T>(schema: Parameters<typeof loader.load<T>>[1]) => loader.load(name, schema),
  };
}

function error(name: string, text: string, schema: Parameters<ConfigLoader['load']>[1]) {
  try {
    load(name, text).load(schema);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('client.yml', () => {
  it('has these defaults', () => {
    const { load: l } = load('client', 'tls:\n  loadTrustStore: false\n');
    expect(l(clientConfigSchema)).toEqual({
      tls: {
        verifyHostname: true,
        loadDefaultTrustStore: false,
        loadTrustStore: false,
        loadKeyStore: false,
      },
      request: {
        timeout: 3000,
        connectTimeout: 2000,
        errorThreshold: 2,
        resetTimeout: 7000,
        enableHttp2: false,
      },
      pathPrefixServices: {},
      oauth: {
        multipleAuthServers: false,
        token: {
          tokenRenewBeforeExpired: 60000,
          expiredRefreshRetryDelay: 2000,
          earlyRefreshRetryDelay: 4000,
        },
        key: { uri: '/oauth2/key', jwk: false },
      },
    });
  });

  it('a store that is switched on must be named, must exist, and a trust store must be PEM', () => {
    expect(() => load('client', 'tls: {}\n').load(clientConfigSchema)).toThrow(
      /client\.yml at key "tls\.trustStore": is required/,
    );
    expect(() =>
      load(
        'client',
        'tls:\n  loadTrustStore: false\n  loadKeyStore: true\n  keyStore: nope.pem\n',
      ).load(clientConfigSchema),
    ).toThrow(/at key "tls\.keyStore": file not found: .*nope\.pem/);
    const jks = load('client', 'tls:\n  trustStore: client.truststore\n', {
      'client.truststore': '\xfe\xed\xfe\xed binary',
    });
    expect(() => jks.load(clientConfigSchema)).toThrow(
      /at key "tls\.trustStore": .*client\.truststore is not a PEM file of CA certificates \(a Java trust store\? export it with keytool -exportcert -rfc\)$/,
    );
    // A key store must hold the private key and its certificate: two-way TLS is not silently off.
    const certOnly = fs.readFileSync(CA, 'utf8');
    for (const content of ['\xfe\xed\xfe\xed binary', certOnly]) {
      const ks = load(
        'client',
        'tls:\n  loadTrustStore: false\n  loadKeyStore: true\n  keyStore: client.keystore\n',
        {
          'client.keystore': content,
        },
      );
      expect(() => ks.load(clientConfigSchema)).toThrow(
        /at key "tls\.keyStore": .*client\.keystore must hold a PEM private key and its certificate \(a Java key store\? export both as PEM\)$/,
      );
    }
    const pem = path.resolve(CA, '..', 'client.pem');
    expect(
      load(
        'client',
        `tls:\n  loadTrustStore: false\n  loadKeyStore: true\n  keyStore: ${pem}\n`,
      ).load(clientConfigSchema).tls.keyStore,
    ).toBe(pem);
  });

  it("reads the key server under light-4j's newer name oauth.token.key, with audience and client_secret", () => {
    const { load: l } = load(
      'client',
      [
        'tls:',
        `  trustStore: ${CA}`,
        '  tlsVersion: TLSv1.3',
        'oauth:',
        '  token:',
        '    client_credentials:',
        '      uri: /oauth2/token',
        '      client_id: c1',
        '      client_secret: 123456',
        '    key:',
        '      server_url: https://localhost:6886',
        '      uri: /oauth2/key',
        '      client_id: k1',
        '      client_secret: key-secret',
        '      audience: urn:chain:api',
        '      issuer: [https://localhost:6882, https://oauth2-token:6882]',
      ].join('\n'),
    );
    const config = l(clientConfigSchema);
    expect(config.tls.tlsVersion).toBe('TLSv1.3');
    expect(config.oauth.key).toEqual({
      server_url: 'https://localhost:6886',
      uri: '/oauth2/key',
      client_id: 'k1',
      client_secret: 'key-secret',
      jwk: false,
      audience: ['urn:chain:api'],
      issuer: ['https://localhost:6882', 'https://oauth2-token:6882'],
    });
    expect(config.oauth.token.client_credentials).toEqual({
      uri: '/oauth2/token',
      client_id: 'c1',
      client_secret: '123456',
    });
  });

  it('loads light-4j keys it does not implement with one warning each', () => {
    const { loader, load: l } = load(
      'client',
      [
        'tls:',
        '  loadTrustStore: false',
        '  trustStorePass: password',
        'oauth:',
        '  multipleAuthServers: false',
        '  token:',
        '    enableHttp2: true',
        '    refresh_token:',
        '      uri: /oauth2/token',
        '    key:',
        '      enableHttp2: true',
        '  sign:',
        '    timeout: 2000',
        'request:',
        '  errorThreshold: 2',
        '  injectCallerId: false',
      ].join('\n'),
    );
    l(clientConfigSchema);
    expect(loader.warnings.map((w) => w.key)).toEqual([
      'tls.trustStorePass',
      'oauth.token.enableHttp2',
      'oauth.token.key.enableHttp2',
      'oauth.sign',
    ]);
  });

  it('stops on a misspelled key with the closest known one, named as written', () => {
    const err = error(
      'client',
      'tls:\n  loadTrustStore: false\noauth:\n  token:\n    key:\n      audiance: x\n',
      clientConfigSchema,
    );
    expect(err.key).toBe('oauth.token.key.audiance');
    expect(err.reason).toBe('unknown key; did you mean "audience"?');
    expect(
      error(
        'client',
        'tls:\n  loadTrustStore: false\n  verifyHostName: false\n',
        clientConfigSchema,
      ).reason,
    ).toBe('unknown key; did you mean "verifyHostname"?');
  });

  it("request: light-4j's circuit breaker and connect time-out keys, as light-4j names them", () => {
    const { loader, load: l } = load(
      'client',
      [
        'tls:',
        '  loadTrustStore: false',
        'request:',
        '  timeout: 1500',
        '  connectTimeout: 500',
        '  errorThreshold: 0',
        '  resetTimeout: 1000',
        '  enableHttp2: true',
      ].join('\n'),
    );
    expect(l(clientConfigSchema).request).toEqual({
      timeout: 1500,
      connectTimeout: 500,
      errorThreshold: 0,
      resetTimeout: 1000,
      enableHttp2: true,
    });
    expect(loader.warnings).toEqual([]);
    expect(
      error(
        'client',
        'tls:\n  loadTrustStore: false\nrequest:\n  errorThreshold: -1\n',
        clientConfigSchema,
      ).key,
    ).toBe('request.errorThreshold');
    expect(
      error(
        'client',
        'tls:\n  loadTrustStore: false\nrequest:\n  resetTimeout: 0\n',
        clientConfigSchema,
      ).key,
    ).toBe('request.resetTimeout');
    // The removed choice of HTTP/1.1 client: any value stops the start, naming file and key.
    for (const value of ['node', 'undici', 'node:https']) {
      const client = error(
        'client',
        `tls:\n  loadTrustStore: false\nrequest:\n  http1Client: ${value}\n`,
        clientConfigSchema,
      );
      expect(client.key).toBe('request.http1Client');
      expect(client.message).toMatch(
        /\/client\.yml at key "request\.http1Client": removed: every call goes over undici \(HTTP\/1\.1, or HTTP\/2 with request\.enableHttp2\); remove the key$/,
      );
    }
  });

  it('multipleAuthServers: serviceIdAuthServers entries and pathPrefixServices, light-4j entry keys warned', () => {
    const { loader, load: l } = load(
      'client',
      [
        'tls:',
        '  loadTrustStore: false',
        'pathPrefixServices:',
        '  /v2/pet: com.networknt.petstore-1.0.0',
        'oauth:',
        '  multipleAuthServers: true',
        '  token:',
        '    server_url: https://localhost:6882',
        '    client_credentials:',
        '      uri: /oauth2/token',
        '      serviceIdAuthServers:',
        '        com.networknt.petstore-1.0.0:',
        '          server_url: https://localhost:7771',
        '          enableHttp2: true',
        '          proxyHost: proxy.lightapi.net',
        '          client_id: f7d42348',
        '          client_secret: 123456',
        '          scope: [petstore.r, petstore.w]',
        '        com.networknt.market-1.0.0:',
        '          client_id: market',
        '          client_secret: s',
        '    refresh_token:',
        '      scope: petstore.r',
      ].join('\n'),
    );
    const config = l(clientConfigSchema);
    expect(config.oauth.multipleAuthServers).toBe(true);
    expect(config.pathPrefixServices).toEqual({ '/v2/pet': 'com.networknt.petstore-1.0.0' });
    expect(config.oauth.token.client_credentials?.serviceIdAuthServers).toEqual({
      'com.networknt.petstore-1.0.0': {
        server_url: 'https://localhost:7771',
        client_id: 'f7d42348',
        client_secret: '123456',
        scope: ['petstore.r', 'petstore.w'],
      },
      'com.networknt.market-1.0.0': { client_id: 'market', client_secret: 's' },
    });
    expect(config.oauth.token.refresh_token).toEqual({
      uri: '/oauth2/token',
      scope: ['petstore.r'],
    });
    expect(loader.warnings.map((w) => w.key)).toEqual([
      'oauth.token.client_credentials.serviceIdAuthServers.com.networknt.petstore-1.0.0.enableHttp2',
      'oauth.token.client_credentials.serviceIdAuthServers.com.networknt.petstore-1.0.0.proxyHost',
    ]);
  });

  it('multipleAuthServers mistakes stop the service naming the key', () => {
    const base = (lines: string[]) =>
      ['tls:', '  loadTrustStore: false', ...lines].join('\n') + '\n';
    const cases: [string[], string, string][] = [
      [
        [
          'oauth:',
          '  multipleAuthServers: true',
          '  token:',
          '    client_credentials:',
          '      uri: /t',
        ],
        'oauth.token.client_credentials.serviceIdAuthServers',
        'is required (at least one serviceId) when oauth.multipleAuthServers is true',
      ],
      [
        [
          'oauth:',
          '  multipleAuthServers: true',
          '  token:',
          '    client_credentials:',
          '      uri: /t',
          '      serviceIdAuthServers:',
          '        svc: { client_id: c, client_secret: s }',
        ],
        'oauth.token.client_credentials.serviceIdAuthServers.svc.server_url',
        'is required (or oauth.token.server_url)',
      ],
      [
        [
          'pathPrefixServices: /a=other',
          'oauth:',
          '  multipleAuthServers: true',
          '  token:',
          '    server_url: https://t',
          '    client_credentials:',
          '      uri: /t',
          '      serviceIdAuthServers:',
          '        svc: { client_id: c, client_secret: s }',
        ],
        'pathPrefixServices./a',
        'names serviceId "other", which has no oauth.token.client_credentials.serviceIdAuthServers entry',
      ],
      [
        [
          'oauth:',
          '  multipleAuthServers: true',
          '  token:',
          '    server_url: https://t',
          '    client_credentials:',
          '      uri: /t',
          '      serviceIdAuthServers:',
          '        svc: { client_id: c }',
        ],
        'oauth.token.client_credentials.serviceIdAuthServers.svc.client_secret',
        'expected string, received undefined',
      ],
      [
        ['oauth:', '  token:', '    client_credentials:', '      uri: /t'],
        'oauth.token.client_credentials.client_id',
        'is required',
      ],
      [['pathPrefixServices: {a: svc}'], 'pathPrefixServices', 'every path prefix starts with /'],
    ];
    for (const [lines, key, reason] of cases) {
      const err = error('client', base(lines), clientConfigSchema);
      expect({ key: err.key, reason: err.reason }).toEqual({ key, reason });
    }
    const typo = error(
      'client',
      base([
        'oauth:',
        '  multipleAuthServers: true',
        '  token:',
        '    server_url: https://t',
        '    client_credentials:',
        '      uri: /t',
        '      serviceIdAuthServers:',
        '        svc: { client_id: c, client_secret: s, scpoe: x }',
      ]),
      clientConfigSchema,
    );
    expect(typo.key).toBe('oauth.token.client_credentials.serviceIdAuthServers.svc.scpoe');
    expect(typo.reason).toMatch(/^unknown key/);
  });

  it('refuses the key server section under both names with different values', () => {
    const err = error(
      'client',
      'tls:\n  loadTrustStore: false\noauth:\n  key:\n    uri: /a\n  token:\n    key:\n      uri: /b\n',
      clientConfigSchema,
    );
    expect(err.key).toBe('oauth.token.key.uri');
  });
});

describe('secret.yml', () => {
  it('holds the four secrets', () => {
    const { load: l } = load(
      'secret',
      'clientCredentialsClientSecret: s1\nkeyClientSecret: s2\nrefreshTokenClientSecret: s3\n',
    );
    expect(l(secretConfigSchema)).toEqual({
      clientCredentialsClientSecret: 's1',
      keyClientSecret: 's2',
      refreshTokenClientSecret: 's3',
    });
  });

  it('reads an all-digit secret as the text written (defect: a type error stopped the service)', () => {
    const { load: l } = load(
      'secret',
      'clientCredentialsClientSecret: 123456\nkeyClientSecret: 0012345\nauthorizationCodeClientSecret: 98765432109876543210\n',
    );
    expect(l(secretConfigSchema)).toEqual({
      clientCredentialsClientSecret: '123456',
      keyClientSecret: '0012345',
      authorizationCodeClientSecret: '98765432109876543210',
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-env-'));
    fs.writeFileSync(path.join(dir, 'secret.yml'), 'keyClientSecret: ${KEY_SECRET}\n');
    const fromEnv = new ConfigLoader({ bundledDir: dir, env: { KEY_SECRET: '000042' } });
    expect(fromEnv.load('secret', secretConfigSchema)).toEqual({ keyClientSecret: '000042' });
  });

  it('refuses a misspelled secret (defect: unknown keys were accepted), light-4j secrets load with a warning', () => {
    const err = error('secret', 'clientCredentialClientSecret: s\n', secretConfigSchema);
    expect(err.reason).toBe('unknown key; did you mean "clientCredentialsClientSecret"?');
    const { loader, load: l } = load(
      'secret',
      'serverKeystorePass: password\nkeyClientSecret: k\n',
    );
    expect(l(secretConfigSchema)).toEqual({ keyClientSecret: 'k' });
    expect(loader.warnings.map((w) => w.key)).toEqual(['serverKeystorePass']);
  });
});

describe('clientSecrets', () => {
  const client = (secrets: { cc?: string; ac?: string; key?: string }) =>
    ({
      oauth: {
        token: {
          client_credentials: { uri: '/t', client_id: 'c', client_secret: secrets.cc },
          authorization_code: { uri: '/t', client_id: 'c', client_secret: secrets.ac },
        },
        key: { uri: '/k', jwk: false, client_secret: secrets.key },
      },
    }) as never;

  it("takes secret.yml's secrets, else client.yml's client_secret", () => {
    expect(clientSecrets(client({ cc: 'c1', ac: 'a1', key: 'k1' }), {})).toEqual({
      clientCredentialsClientSecret: 'c1',
      authorizationCodeClientSecret: 'a1',
      refreshTokenClientSecret: undefined,
      keyClientSecret: 'k1',
    });
    expect(
      clientSecrets(client({ cc: 'c1', key: 'k1' }), {
        clientCredentialsClientSecret: 'from-secret-yml',
        keyClientSecret: 'k2',
      }),
    ).toEqual({
      clientCredentialsClientSecret: 'from-secret-yml',
      authorizationCodeClientSecret: undefined,
      refreshTokenClientSecret: undefined,
      keyClientSecret: 'k2',
    });
  });
});

describe('client.yml: sender-constrained own tokens', () => {
  const PEM = path.resolve(CA, '..', 'clients', 'api-a.pem');
  const yml = (cc: string, keyStore = false) =>
    `tls:\n  loadTrustStore: false\n${keyStore ? `  loadKeyStore: true\n  keyStore: ${PEM}\n` : ''}` +
    `oauth:\n  token:\n    client_credentials:\n      uri: /oauth2/token\n      client_id: c\n${cc}`;

  it('absent: none, and client_secret_basic (no key of its own in what is read)', () => {
    const cc = load('client', yml('')).load(clientConfigSchema).oauth.token.client_credentials;
    expect(cc).toEqual({ uri: '/oauth2/token', client_id: 'c' });
  });

  it.each(['none', 'mtls', 'dpop'])('tokenBinding %s is read', (binding) => {
    const cc = load('client', yml(`      tokenBinding: ${binding}\n`, true)).load(
      clientConfigSchema,
    ).oauth.token.client_credentials;
    expect(cc?.tokenBinding).toBe(binding);
  });

  it('mtls and tls_client_auth need the key store: a start-up error naming the key', () => {
    expect(error('client', yml('      tokenBinding: mtls\n'), clientConfigSchema).message).toMatch(
      /at key "oauth\.token\.client_credentials\.tokenBinding": mtls needs tls\.loadKeyStore: true \(the certificate\)$/,
    );
    expect(
      error(
        'client',
        yml('      token_endpoint_auth_method: tls_client_auth\n'),
        clientConfigSchema,
      ).message,
    ).toMatch(
      /at key "oauth\.token\.client_credentials\.token_endpoint_auth_method": tls_client_auth needs tls\.loadKeyStore: true \(the certificate\)$/,
    );
    // DPoP needs no certificate.
    expect(
      load('client', yml('      tokenBinding: dpop\n')).load(clientConfigSchema).oauth.token
        .client_credentials?.tokenBinding,
    ).toBe('dpop');
  });

  it.each([
    ['tokenBinding: bearer', /at key "oauth\.token\.client_credentials\.tokenBinding"/],
    ['token_endpoint_auth_method: client_secret_post', /token_endpoint_auth_method"/],
  ])('%s is refused', (line, message) => {
    expect(error('client', yml(`      ${line}\n`, true), clientConfigSchema).message).toMatch(
      message,
    );
  });
});

describe('client.yml oauth.token.token_exchange (RFC 8693)', () => {
  const yml = (section: string) =>
    'tls:\n  loadTrustStore: false\noauth:\n  token:\n    token_exchange:\n' +
    '      client_id: api-b-client\n' +
    section;

  it("reads light-4j's keys with ours: uri and subjectTokenType by default, '' as unset", () => {
    const read = (section: string) =>
      load('client', yml(section)).load<ClientConfig>(clientConfigSchema).oauth.token
        .token_exchange;
    expect(read('      audience: api-c\n      scope: api_c.r\n')).toEqual({
      uri: '/oauth2/token',
      client_id: 'api-b-client',
      audience: 'api-c',
      scope: ['api_c.r'],
      subjectTokenType: 'urn:ietf:params:oauth:token-type:jwt',
    });
    expect(read("      subjectTokenType: ''\n")?.subjectTokenType).toBe(
      'urn:ietf:params:oauth:token-type:jwt',
    );
  });

  it('mtls and tls_client_auth need the key store: a start-up error naming the key', () => {
    for (const [line, key] of [
      ['tokenBinding: mtls', 'tokenBinding'],
      ['token_endpoint_auth_method: tls_client_auth', 'token_endpoint_auth_method'],
    ]) {
      expect(error('client', yml(`      ${line}\n`), clientConfigSchema).message).toMatch(
        new RegExp(
          `at key "oauth\\.token\\.token_exchange\\.${key}": .* needs tls\\.loadKeyStore: true \\(the certificate\\)$`,
        ),
      );
    }
  });

  it("light-4j's fixed subjectToken: a warning when set, none when empty", () => {
    const set = load('client', yml("      subjectToken: 'eyJ.x.y'\n"));
    set.load(clientConfigSchema);
    expect(set.loader.warnings).toEqual([
      {
        file: path.join(set.dir, 'client.yml'),
        key: 'oauth.token.token_exchange.subjectToken',
        message:
          'light-4j key not supported here; ignored (the subject token is the token each request brings)',
      },
    ]);
    const empty = load('client', yml("      subjectToken: ''\n"));
    empty.load(clientConfigSchema);
    expect(empty.loader.warnings).toEqual([]);
  });
});

describe('client.yml oauth.introspection and secret.yml introspectionClientSecret', () => {
  it('reads the introspection server: server_url and client_id required, uri /oauth2/introspection by default', () => {
    const { load: l } = load(
      'client',
      'tls:\n  loadTrustStore: false\noauth:\n  introspection:\n    server_url: https://oauth2-token:6882\n    client_id: api-a-client\n',
    );
    expect(l<ClientConfig>(clientConfigSchema).oauth.introspection).toEqual({
      server_url: 'https://oauth2-token:6882',
      uri: '/oauth2/introspection',
      client_id: 'api-a-client',
    });
    const err = error(
      'client',
      'tls:\n  loadTrustStore: false\noauth:\n  introspection:\n    client_id: api-a-client\n',
      clientConfigSchema,
    );
    expect([err.key, err.reason]).toEqual([
      'oauth.introspection.server_url',
      'expected string, received undefined',
    ]);
    const { load: s } = load('secret', 'introspectionClientSecret: 0042\n');
    expect(s(secretConfigSchema)).toEqual({ introspectionClientSecret: '0042' });
  });
});
