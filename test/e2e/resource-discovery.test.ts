import * as oauth from 'oauth4webapi';
import {
  CERTS,
  configDir,
  httpsRequest,
  jwtSecurityYml,
  startService,
  startTokenServerAtIssuer,
  type ServiceProcess,
  type TokenServerProcess,
} from '@chain/testkit';

// RFC 9728 as a client does it, with oauth4webapi: a 401 names the resource's metadata, the
// metadata names the token server, its RFC 8414 metadata names the token endpoint, and the
// token got there is taken by the service. Real processes over HTTPS.
vi.setConfig({ testTimeout: 60000, hookTimeout: 60000 });

/** oauth4webapi's fetch, over the tests' HTTPS helper (it trusts the development CA). */
const customFetch = async (url: string, init: oauth.CustomFetchOptions<string, unknown>) => {
  const answer = await httpsRequest(url, {
    method: init.method,
    headers: init.headers,
    body: init.body === undefined ? undefined : String(init.body),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    for (const v of [value ?? []].flat()) headers.append(name, v);
  }
  return new Response(answer.text, { status: answer.status, headers });
};

describe('RFC 9728: from a 401 to a token that works (oauth4webapi, real processes)', () => {
  let ts: TokenServerProcess;
  let apiD: ServiceProcess;

  beforeAll(async () => {
    ts = await startTokenServerAtIssuer({
      files: {
        'clients.yml': 'clients:\n  discoverer: { secret: discoverer-secret, scope: [api_d.r] }\n',
      },
    });
    apiD = await startService('api-d', {
      configDir: configDir({
        'server.yml': `serviceId: com.networknt.apid-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
        'security.yml': jwtSecurityYml({
          scope: true,
          jwt: '  strict: true\n',
          keys: { logJwtToken: false },
          extra: 'resourceMetadata:\n  enabled: true\n',
        }),
        'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\noauth:\n  key:\n    audience: urn:chain:api\n    issuer: ${ts.tokenUrl}\n`,
      }),
    });
  });

  afterAll(async () => {
    await Promise.all([ts, apiD].filter(Boolean).map((p) => p.stop()));
  });

  it('discovers the token server from the challenge and gets a token the service takes (jwt.strict on)', async () => {
    const resource = new URL(`https://localhost:${apiD.port}`);
    const api = new URL('/v1/data', resource);

    // 1. A call without a token: 401 with the metadata's URL in the challenge (RFC 9728 5.1).
    const refused = await httpsRequest(api.href);
    expect(refused.status).toBe(401);
    const metadataUrl = `${resource.origin}/.well-known/oauth-protected-resource`;
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer realm="api", resource_metadata="${metadataUrl}"`,
    );
    const named = /resource_metadata="([^"]+)"/.exec(refused.headers['www-authenticate']!)![1];

    // 2. The metadata from that URL, its `resource` checked against the resource called (3.3).
    const rs = await oauth.processResourceDiscoveryResponse(
      resource,
      await customFetch(named, { method: 'GET', headers: {}, redirect: 'manual', body: undefined }),
    );
    expect(rs).toEqual({
      resource: resource.origin,
      authorization_servers: [ts.tokenUrl],
      scopes_supported: ['api_d.r', 'api_d.w'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'PS256', 'RS256'],
    });
    // oauth4webapi's own request for the resource goes to the same URL.
    const direct = await oauth.resourceDiscoveryRequest(resource, {
      [oauth.customFetch]: customFetch,
    });
    expect(await oauth.processResourceDiscoveryResponse(resource, direct)).toEqual(rs);

    // 3. The authorization server's metadata (RFC 8414), its issuer checked.
    const issuer = new URL(rs.authorization_servers![0]);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, {
        algorithm: 'oauth2',
        [oauth.customFetch]: customFetch,
      }),
    );

    // 4. A token for one of the scopes the resource lists, then the call again.
    const client = { client_id: 'discoverer' };
    const tokenResponse = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic('discoverer-secret'),
        { scope: rs.scopes_supported![0] },
        { [oauth.customFetch]: customFetch },
      ),
    );
    // The token server's tokens are RFC 9068 access tokens: what jwt.strict asks for.
    const [header, payload] = tokenResponse.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as object);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'RS256', kid: '100' });
    expect(Object.keys(payload)).toEqual(
      expect.arrayContaining(['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id']),
    );
    const answer = await httpsRequest(api.href, {
      headers: { Authorization: `Bearer ${tokenResponse.access_token}` },
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: ['API D: Message 1', 'API D: Message 2'],
    });
  });

  it('a refused token gets the metadata URL too, after the realm', async () => {
    const answer = await httpsRequest(`https://localhost:${apiD.port}/v1/data`, {
      headers: { Authorization: 'Bearer not-a-token' },
    });
    expect([answer.status, answer.headers['www-authenticate']]).toEqual([
      401,
      `Bearer realm="api", resource_metadata="https://localhost:${apiD.port}/.well-known/oauth-protected-resource", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"`,
    ]);
  });
});
