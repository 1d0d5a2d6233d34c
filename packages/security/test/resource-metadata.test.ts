import { createVerifier } from '../src/verifier.js';
import { resourceMetadataUrl } from '../src/resource-metadata.js';

// security.yml resourceMetadata without the runtime: a verifier an adapter builds.
const config = (resourceMetadata: Record<string, unknown>, dpop: Record<string, unknown> = {}) => ({
  enableVerifyJwt: true,
  jwt: { certificate: {} },
  dpop,
  resourceMetadata,
});
const challengeOf = async (verifier: ReturnType<typeof createVerifier>) => {
  const verdict = await verifier.verify({
    method: 'GET',
    path: '/v1/x',
    headers: {},
    requiredScopes: [],
  });
  return verdict.ok ? undefined : verdict.refusal.headers['WWW-Authenticate'];
};

describe('resourceMetadata in a verifier', () => {
  it('names resource, else the first of dpop.origins, else where the verifier is told it listens', async () => {
    const named = createVerifier({
      config: config({ enabled: true, resource: 'https://api.example/v1' }),
    });
    expect(await challengeOf(named)).toBe(
      'Bearer realm="api", resource_metadata="https://api.example/.well-known/oauth-protected-resource/v1"',
    );
    const origins = createVerifier({
      config: config(
        { enabled: true },
        { origins: ['https://b.example:7442', 'https://c.example'] },
      ),
    });
    expect(await challengeOf(origins)).toBe(
      'Bearer realm="api", resource_metadata="https://b.example:7442/.well-known/oauth-protected-resource"',
    );
    const own = createVerifier({
      config: config({ enabled: true }),
      ownOrigins: () => ['https://localhost:9'],
    });
    expect(await challengeOf(own)).toBe(
      'Bearer realm="api", resource_metadata="https://localhost:9/.well-known/oauth-protected-resource"',
    );
  });

  it('refuses to start when it cannot know the resource', () => {
    expect(() => createVerifier({ config: config({ enabled: true }) })).toThrow(
      'Config error in security.yml at key "resourceMetadata.resource": is required (or dpop.origins) where the verifier is not told where it listens',
    );
  });

  it.each([
    ['https://a.example', 'https://a.example/.well-known/oauth-protected-resource'],
    ['https://a.example/', 'https://a.example/.well-known/oauth-protected-resource'],
    [
      'https://a.example:8443/api/v1',
      'https://a.example:8443/.well-known/oauth-protected-resource/api/v1',
    ],
  ])('the metadata URL of %s is %s (RFC 9728 section 3.1)', (resource, url) => {
    expect(resourceMetadataUrl(resource)).toBe(url);
  });
});
