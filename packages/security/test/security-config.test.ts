import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { configDir, createSigningKey } from '@chain/testkit';
import { securityConfigSchema } from '../src/security-config.js';

const rsa = createSigningKey('100');
const ec = createSigningKey('ec', { type: 'ec' });
const PRIVATE = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function load(yaml: string | undefined, files: Record<string, string> = {}, name = 'security') {
  const dir = configDir({ ...(yaml !== undefined && { [`${name}.yml`]: yaml }), ...files });
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
  return {
    dir,
    loader,
    load: () => loader.load(['openapi-security', 'security'], securityConfigSchema),
  };
}

function error(yaml: string, files: Record<string, string> = {}): ConfigError {
  const { load: run } = load(yaml, files);
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

const ON = 'enableVerifyJwt: true\njwt:\n  certificate:\n    "100": a.crt\n';

describe('security.yml', () => {
  it("has light-4j's defaults, and ours", () => {
    const { dir, load: run } = load(undefined);
    expect(run()).toEqual({
      enableVerifyJwt: false,
      enableVerifySwt: false,
      swtClientIdHeader: 'swt-client',
      swtClientSecretHeader: 'swt-secret',
      swt: { cacheMaxEntries: 10000, cacheMaxAgeSeconds: 60, requireTokenType: true },
      enableVerifyScope: true,
      enableMockJwt: false,
      enableExtractScopeToken: true,
      skipVerifyScopeWithoutSpec: false,
      skipPathPrefixes: [],
      passThroughClaims: {},
      actorPaths: [],
      bootstrapFromKeyService: false,
      jwt: {
        certificate: {
          '100': path.join(dir, 'primary.crt'),
          '101': path.join(dir, 'secondary.crt'),
        },
        clockSkewInSeconds: 60,
        cacheMaxEntries: 10000,
        algorithms: ['RS256'],
        keyMaxAgeSeconds: 600,
        strict: false,
        issuers: {},
      },
      dpop: {
        algorithms: ['ES256', 'EdDSA', 'PS256', 'RS256'],
        iatWindowSeconds: 60,
        replayCacheMaxEntries: 100000,
        origins: [],
      },
      resourceMetadata: { enabled: false },
      logJwtToken: true,
      logClientUserScope: false,
      oauthHttp2Support: true,
      enableJwtCache: true,
    });
  });

  it("reads light-4j's string forms of lists and maps", () => {
    const { dir, load: run } = load(
      [
        'jwt:',
        '  certificate: 100=a.crt&101=b.crt',
        '  algorithms: RS256, ES256',
        '  keyResolver: JsonWebKeySet',
        'skipPathPrefixes: /health,/v1/public',
        'passThroughClaims: \'{"client_id":"X-Client-Id"}\'',
      ].join('\n'),
    );
    expect(run()).toMatchObject({
      jwt: {
        certificate: { '100': path.join(dir, 'a.crt'), '101': path.join(dir, 'b.crt') },
        algorithms: ['RS256', 'ES256'],
        keyResolver: 'JsonWebKeySet',
      },
      skipPathPrefixes: ['/health', '/v1/public'],
      passThroughClaims: { client_id: 'X-Client-Id' },
    });
  });

  it('checks the certificate files only when verification is on and keys are not from the key server', () => {
    const { dir, load: run } = load(ON, { 'a.crt': rsa.certificatePem });
    expect(run().jwt.certificate).toEqual({ '100': path.join(dir, 'a.crt') });
    expect(error(ON).message).toMatch(/at key "jwt.certificate.100": file not found: .*a\.crt$/);
    expect(() => load(`${ON}bootstrapFromKeyService: true\n`).load()).not.toThrow();
  });

  describe('jwt.certificate: read once, when security.yml loads', () => {
    const ON_101 = (file: string) =>
      `enableVerifyJwt: true\njwt:\n  certificate:\n    "101": ${file}\n`;
    const refusal = (file: string, files: Record<string, string> = {}) => {
      const { dir, load: run } = load(ON_101(file), files);
      try {
        run();
      } catch (err) {
        if (err instanceof ConfigError) return { dir, err };
        throw err;
      }
      throw new Error('expected a ConfigError');
    };

    it('keeps the key of a certificate of an allowed type by its kid', () => {
      const { load: run } = load(ON, { 'a.crt': rsa.certificatePem });
      const key = run().certificates!.get('100')!;
      expect(key).toMatchObject({ algorithms: ['RS256'] });
      expect(key.key.export({ format: 'jwk' })).toEqual(rsa.publicKey.export({ format: 'jwk' }));
    });

    it.each([
      ['a missing file', 'missing.crt', {}, (dir: string) => `file not found: ${dir}/missing.crt`],
      ['a folder', '.', {}, (dir: string) => `cannot be read: ${dir}`],
      [
        'a private key',
        'private.pem',
        { 'private.pem': PRIVATE },
        (dir: string) => `${dir}/private.pem holds a private key, not a certificate or public key`,
      ],
      [
        'an EC certificate while only RS256 is allowed',
        'ec.crt',
        { 'ec.crt': ec.certificatePem },
        (dir: string) =>
          `${dir}/ec.crt holds a EC prime256v1 key (ES256); jwt.algorithms allows RS256`,
      ],
    ])('names the problem of %s, the file and the key', (_name, file, files, problem) => {
      const { dir, err } = refusal(file, files);
      expect(err).toMatchObject({
        file: path.join(dir, 'security.yml'),
        key: 'jwt.certificate.101',
      });
      expect(err.reason).toBe(problem(dir));
      expect(err.message).not.toMatch(/BEGIN|MII/);
    });

    it('stops the start, naming the file and key, for a certificate that cannot be read', () => {
      const { dir, err } = refusal('/missing/secondary.crt');
      expect(err.message).toBe(
        `Config error in ${dir}/security.yml at key "jwt.certificate.101": file not found: /missing/secondary.crt`,
      );
    });
  });

  describe('configuration that would weaken security stops the service', () => {
    it.each([
      ['empty', ''],
      ['only comments', '# enableVerifyJwt: true\n'],
    ])('an %s security.yml (defect: it started with verification off)', (_name, content) => {
      const err = error(content);
      expect(err.key).toBeUndefined();
      expect(err.reason).toBe('is empty; give its keys, or remove the file to use the defaults');
      expect(err.file).toMatch(/security\.yml$/);
    });

    it('a security.yml cut short', () => {
      expect(error('enableVerifyJwt: true\njwt:\n  certif').message).toMatch(
        /security\.yml at key "jwt": expected object, received string$/,
      );
      expect(
        error('enableVerifyJwt: true\njwt:\n  certificate:\n    "100": [a.crt').message,
      ).toMatch(/security\.yml: not valid YAML \(line 4\)/);
      expect(error('enableVerif').reason).toBe('is not a map of keys (is the file cut short?)');
      expect(error('enableVerifyJwt: true\njwt:\n').key).toBe('jwt');
    });

    it('a private key given as a certificate (defect: it was accepted)', () => {
      const err = error(ON, { 'a.crt': PRIVATE });
      expect(err.key).toBe('jwt.certificate.100');
      expect(err.reason).toMatch(/a\.crt holds a private key, not a certificate or public key$/);
      expect(err.message).not.toMatch(/BEGIN|MII/);
    });

    it('a certificate of a type jwt.algorithms does not allow', () => {
      expect(error(ON, { 'a.crt': ec.certificatePem }).reason).toMatch(
        /holds a EC prime256v1 key \(ES256\); jwt\.algorithms allows RS256$/,
      );
      const allowed = load(`${ON}  algorithms: [ES256]\n`, { 'a.crt': ec.certificatePem });
      expect(allowed.load().jwt.algorithms).toEqual(['ES256']);
    });

    it.each([
      [
        'none',
        'jwt.algorithms.0',
        'none is never accepted (anyone holding the certificate could sign)',
      ],
      [
        'HS256',
        'jwt.algorithms.0',
        'HS256 is never accepted (anyone holding the certificate could sign)',
      ],
      ['RS512', 'jwt.algorithms.0', 'RS512 is not supported; use RS256, PS256, ES256, EdDSA'],
    ])('jwt.algorithms [%s]', (alg, key, reason) => {
      const err = error(`jwt:\n  algorithms: [${alg}]\n`);
      expect(err.key).toBe(key);
      expect(err.reason).toBe(reason);
    });

    it('an empty jwt.algorithms', () => {
      expect(error('jwt:\n  algorithms: []\n').reason).toBe('needs at least one algorithm');
    });

    it.each([
      ['/', 'would skip verification of every path; set enableVerifyJwt: false instead'],
      ['//', 'would skip verification of every path; set enableVerifyJwt: false instead'],
      ['health', 'a path prefix starts with /'],
    ])('skipPathPrefixes [%s]', (prefix, reason) => {
      const err = error(`skipPathPrefixes: ['${prefix}']\n`);
      expect(err.key).toBe('skipPathPrefixes.0');
      expect(err.reason).toBe(reason);
    });

    it.each([
      ['Authorization', 'Authorization carries credentials or framing and cannot take a claim'],
      ['x-scope-token', 'x-scope-token carries credentials or framing and cannot take a claim'],
      ['DPoP', 'DPoP carries credentials or framing and cannot take a claim'],
      [
        'X-Scope-Token-DPoP',
        'X-Scope-Token-DPoP carries credentials or framing and cannot take a claim',
      ],
      ['Bad Header', 'is not a valid header name'],
    ])('passThroughClaims to %s', (header, reason) => {
      const err = error(`passThroughClaims:\n  user_id: ${header}\n`);
      expect(err.key).toBe('passThroughClaims.user_id');
      expect(err.reason).toBe(reason);
    });
  });

  describe('dpop (RFC 9449 proofs)', () => {
    it('reads its keys; origins are kept as htu is compared (lower case, no default port)', () => {
      const { load: run } = load(
        [
          'dpop:',
          '  algorithms: ES256, EdDSA',
          '  iatWindowSeconds: 30',
          '  replayCacheMaxEntries: 500',
          '  origins: [HTTPS://API-B:443, "http://api-b:7442/", "https://[::1]:7442"]',
        ].join('\n'),
      );
      expect(run().dpop).toEqual({
        algorithms: ['ES256', 'EdDSA'],
        iatWindowSeconds: 30,
        replayCacheMaxEntries: 500,
        origins: ['https://api-b', 'http://api-b:7442', 'https://[::1]:7442'],
      });
    });

    it.each([
      ['https://api-b:7442/v1'],
      ['https://api-b:7442?x'],
      ['https://api-b:7442/#f'],
      ['https://user@api-b:7442'],
      ['ftp://api-b'],
      ['api-b:7442'],
      ['not a url'],
    ])('an origin %s stops the service', (origin) => {
      const err = error(`dpop:\n  origins: ["${origin}"]\n`);
      expect(err.key).toBe('dpop.origins.0');
      expect(err.reason).toBe(
        'is not an origin: http(s)://host[:port], without a path, query or user info',
      );
    });

    it.each([
      [
        'algorithms: [none]',
        'dpop.algorithms.0',
        'none is never accepted (anyone holding the certificate could sign)',
      ],
      [
        'algorithms: [HS256]',
        'dpop.algorithms.0',
        'HS256 is never accepted (anyone holding the certificate could sign)',
      ],
      ['algorithms: []', 'dpop.algorithms', 'needs at least one algorithm'],
      ['iatWindowSeconds: 0', 'dpop.iatWindowSeconds', undefined],
      ['replayCacheMaxEntries: 0', 'dpop.replayCacheMaxEntries', undefined],
      ['nonce: true', 'dpop.nonce', 'unknown key'],
    ])('dpop %s stops the service', (line, key, reason) => {
      const err = error(`dpop:\n  ${line}\n`);
      expect(err.key).toBe(key);
      if (reason) expect(err.reason).toMatch(new RegExp(`^${reason.replace(/[()]/g, '\\$&')}`));
    });
  });

  it('loads light-4j keys it does not implement with a warning each, silent when they mean what is done here', () => {
    const { loader, load: run } = load(
      [
        'enableVerifySwt: true',
        'swtClientIdHeader: swt-client',
        'ignoreJwtExpiry: false',
        'enableH2c: false',
        'jwtCacheFullSize: 100',
        'providerId: "01"',
      ].join('\n'),
    );
    run();
    expect(loader.warnings.map((w) => `${w.key}: ${w.message}`)).toEqual([
      'jwtCacheFullSize: light-4j key not supported here; ignored (jwt.cacheMaxEntries bounds the verified-token cache)',
      'providerId: light-4j key not supported here; ignored (federated light-oauth2 key ids are not split here)',
    ]);
  });

  it("reads light-4j's simple web token keys, and ours of the introspection cache", () => {
    const { load: run, loader } = load(
      [
        'enableVerifySwt: true',
        'swtClientIdHeader: X-Swt-Client',
        'swtClientSecretHeader: ""',
        'swt:',
        '  cacheMaxEntries: 5',
        '  cacheMaxAgeSeconds: 0',
      ].join('\n'),
    );
    expect(run()).toMatchObject({
      enableVerifySwt: true,
      swtClientIdHeader: 'X-Swt-Client',
      swtClientSecretHeader: '',
      swt: { cacheMaxEntries: 5, cacheMaxAgeSeconds: 0 },
    });
    expect(loader.warnings).toEqual([]);
  });

  it.each([
    [
      'swtClientIdHeader: Authorization\n',
      'swtClientIdHeader',
      'carries credentials or framing and cannot carry the introspection client',
    ],
    [
      'swtClientSecretHeader: x-scope-token\n',
      'swtClientSecretHeader',
      'carries credentials or framing and cannot carry the introspection client',
    ],
    [
      'swtClientIdHeader: DPoP\n',
      'swtClientIdHeader',
      'carries credentials or framing and cannot carry the introspection client',
    ],
    [
      'swtClientSecretHeader: X-Scope-Token-DPoP\n',
      'swtClientSecretHeader',
      'carries credentials or framing and cannot carry the introspection client',
    ],
    ['swtClientIdHeader: swt client\n', 'swtClientIdHeader', 'is not a valid header name'],
    [
      'swtClientIdHeader: swt\nswtClientSecretHeader: SWT\n',
      'swtClientSecretHeader',
      'must differ from swtClientIdHeader',
    ],
    [
      'swt:\n  cacheMaxAgeSeconds: -1\n',
      'swt.cacheMaxAgeSeconds',
      'Too small: expected number to be >=0',
    ],
    [
      'swt:\n  cacheEntries: 5\n',
      'swt.cacheEntries',
      'unknown key; did you mean "cacheMaxEntries"?',
    ],
  ])('%s stops the service naming the key', (yaml, key, reason) => {
    const err = error(yaml);
    expect([err.key, err.reason]).toEqual([key, reason]);
  });

  it('warns for ignoreJwtExpiry: true, and still checks the expiry', () => {
    const { loader, load: run } = load('ignoreJwtExpiry: true\n');
    run();
    expect(loader.warnings[0].message).toBe(
      'light-4j key not supported here; ignored (the expiry is always checked)',
    );
  });

  it('stops on a misspelled key, naming the closest known key', () => {
    const err = error('enableVerifyJWT: true\n');
    expect(err.message).toBe(
      `Config error in ${err.file} at key "enableVerifyJWT": unknown key; did you mean "enableVerifyJwt"?`,
    );
    expect(error('skipPathPrefix: [/a]\n').reason).toBe(
      'unknown key; did you mean "skipPathPrefixes"?',
    );
    expect(error('jwt:\n  clockSkewInSecond: 5\n').key).toBe('jwt.clockSkewInSecond');
    expect(error('jwt:\n  clockSkewInSeconds: "60"\n').key).toBe('jwt.clockSkewInSeconds');
  });

  it("reads light-rest-4j's openapi-security.yml instead, with its older scope-token key", () => {
    const { load: run } = load(
      'enableVerifyJwt: false\nenableVerifyJWTScopeToken: false\n',
      { 'security.yml': 'enableVerifyJwt: true\n' },
      'openapi-security',
    );
    expect(run()).toMatchObject({ enableVerifyJwt: false, enableExtractScopeToken: false });
  });
});
