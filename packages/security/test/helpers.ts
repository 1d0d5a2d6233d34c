import type { SecurityConfig } from '../src/security-config';

/** A security.yml as loaded, with verification on, for tests. */
export function securityConfig(
  certificate: Record<string, string>,
  overrides: Partial<SecurityConfig> = {},
): SecurityConfig {
  return {
    enableVerifyJwt: true,
    enableVerifyScope: true,
    enableMockJwt: false,
    logJwtToken: true,
    logClientUserScope: false,
    oauthHttp2Support: true,
    enableJwtCache: true,
    ...overrides,
    jwt: { certificate, clockSkewInSeconds: 60, cacheMaxEntries: 100, ...overrides.jwt },
  };
}

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, set: (ms: number) => (t = ms), advance: (ms: number) => (t += ms) };
}
