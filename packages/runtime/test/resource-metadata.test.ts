import request from 'supertest';
import { CERTS, devSigningKey, mintToken } from '@chain/testkit';
import { fixtureConfig, fixtureService, FRAMEWORKS } from './support.js';

// security.yml resourceMetadata: RFC 9728 metadata, and its URL in every challenge.
const primary = devSigningKey('100');
const ORIGIN = 'https://localhost:7000';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';
const security = (lines: string) => `enableVerifyJwt: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
logJwtToken: false
resourceMetadata:
${lines}`;
const client = `tls:\n  trustStore: ${CERTS}/ca.crt\noauth:\n  key:\n    issuer: https://localhost:6882\n`;

describe.each(FRAMEWORKS)('resourceMetadata on the %s host', (framework) => {
  const service = (lines = '  enabled: true\n', files: Record<string, string> = {}) => {
    const config = fixtureConfig(framework, {
      'security.yml': security(lines),
      'client.yml': client,
      ...files,
    });
    const { app } = fixtureService(config);
    app.setOwnOrigins([ORIGIN, 'https://127.0.0.1:7000']);
    return request(app.listener);
  };

  it('serves the metadata at the well-known path, no token needed', async () => {
    const res = await service().get(WELL_KNOWN);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      resource: ORIGIN,
      authorization_servers: ['https://localhost:6882'],
      scopes_supported: ['items.r', 'items.w'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'PS256', 'RS256'],
    });
  });

  it('a 401, bare or with an error, and a 403 name it in WWW-Authenticate', async () => {
    const meta = `resource_metadata="${ORIGIN}${WELL_KNOWN}"`;
    const app = service();
    const none = await app.get('/v1/items/1');
    expect([none.status, none.body.code, none.headers['www-authenticate']]).toEqual([
      401,
      'ERR10002',
      `Bearer realm="api", ${meta}`,
    ]);
    const bad = await app.get('/v1/items/1').set('Authorization', 'Bearer abc.def.ghi');
    expect([bad.status, bad.headers['www-authenticate']]).toEqual([
      401,
      `Bearer realm="api", ${meta}, error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"`,
    ]);
    const token = mintToken(primary, { scope: ['other'] });
    const scope = await app.get('/v1/items/1').set('Authorization', `Bearer ${token}`);
    expect([scope.status, scope.headers['www-authenticate']]).toEqual([
      403,
      `Bearer realm="api", ${meta}, error="insufficient_scope", error_description="Scopes [other] in authorization token and specification scopes [items.r] are not matched", scope="items.r"`,
    ]);
  });

  it('resource and authorizationServers as set; a resource with a path has it after the well-known path', async () => {
    const app = service(
      '  enabled: true\n  resource: https://api.example/v1\n  authorizationServers: [https://as.example, https://as2.example]\n',
    );
    const res = await app.get(`${WELL_KNOWN}/v1`);
    expect(res.body).toMatchObject({
      resource: 'https://api.example/v1',
      authorization_servers: ['https://as.example', 'https://as2.example'],
    });
    expect((await app.get(WELL_KNOWN)).status).toBe(404);
    const none = await app.get('/v1/items/1');
    expect(none.headers['www-authenticate']).toBe(
      'Bearer realm="api", resource_metadata="https://api.example/.well-known/oauth-protected-resource/v1"',
    );
  });

  it('jwt.issuers are the authorization servers; another method is 405 ERR10008', async () => {
    const app = service('  enabled: true\n', {
      'security.yml': `${security('  enabled: true\n').replace(
        'jwt:\n',
        `jwt:\n  issuers:\n    https://one.example: { certificate: { '100': ${CERTS}/primary.crt } }\n    https://two.example: { certificate: { '101': ${CERTS}/secondary.crt } }\n`,
      )}`,
    });
    expect((await app.get(WELL_KNOWN)).body.authorization_servers).toEqual([
      'https://one.example',
      'https://two.example',
    ]);
    const post = await app.post(WELL_KNOWN);
    expect([post.status, post.headers.allow, post.body.code]).toEqual([
      405,
      'GET, HEAD',
      'ERR10008',
    ]);
  });

  it('off (the default): not served, no resource_metadata', async () => {
    const app = service('  enabled: false\n');
    expect((await app.get(WELL_KNOWN)).status).toBe(404);
    expect((await app.get('/v1/items/1')).headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('with two-way TLS: tls_client_certificate_bound_access_tokens', async () => {
    const server = `serviceId: runtime-test\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\nenableTwoWayTls: true\ntruststoreName: ${CERTS}/ca.crt\n`;
    const res = await service('  enabled: true\n', { 'server.yml': server }).get(WELL_KNOWN);
    expect(res.body.tls_client_certificate_bound_access_tokens).toBe(true);
  });
});

describe('resourceMetadata in security.yml', () => {
  it.each([
    [
      'enableVerifyJwt: false\nresourceMetadata:\n  enabled: true\n',
      'resourceMetadata.enabled": needs enableVerifyJwt or enableVerifySwt',
    ],
    [
      security('  enabled: true\n  resource: http://api.example\n'),
      'resourceMetadata.resource": Invalid URL',
    ],
    [
      security('  enabled: true\n  resource: https://api.example/#x\n'),
      'resourceMetadata.resource": has no fragment',
    ],
    [
      security('  enabled: true\n  authorizationServer: https://as\n'),
      'resourceMetadata.authorizationServer": unknown key; did you mean "authorizationServers"?',
    ],
  ])('refuses %j at start, naming the file and key', (yml, message) => {
    expect(() => fixtureConfig('native', { 'security.yml': yml })).toThrow(message);
  });
});
