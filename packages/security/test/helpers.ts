import fs from 'node:fs';
import type { SigningKey } from '@chain/testkit';
import { StatusError } from '@chain/errors';
import { DEFAULT_ALGORITHMS, type Algorithm } from '../src/algorithms.js';
import type { KeyStore } from '../src/key-store.js';
import { verificationKey, type VerificationKey } from '../src/public-key.js';
import type { SecurityConfig } from '../src/security-config.js';
import { TokenError } from '../src/token-error.js';

/** A security.yml as loaded, with verification on, for tests: the certificates read as it reads them. */
export function securityConfig(
  certificate: Record<string, string>,
  overrides: Partial<SecurityConfig> = {},
): SecurityConfig {
  const config: SecurityConfig = {
    enableVerifyJwt: true,
    enableVerifySwt: false,
    swtClientIdHeader: 'swt-client',
    swtClientSecretHeader: 'swt-secret',
    enableVerifyScope: true,
    enableMockJwt: false,
    enableExtractScopeToken: true,
    skipVerifyScopeWithoutSpec: false,
    skipPathPrefixes: [],
    passThroughClaims: {},
    actorPaths: [],
    bootstrapFromKeyService: false,
    logJwtToken: true,
    logClientUserScope: false,
    oauthHttp2Support: true,
    enableJwtCache: true,
    ...overrides,
    resourceMetadata: { enabled: false, ...overrides.resourceMetadata },
    dpop: {
      algorithms: ['ES256', 'EdDSA', 'PS256', 'RS256'],
      iatWindowSeconds: 60,
      replayCacheMaxEntries: 100,
      origins: [],
      ...overrides.dpop,
    },
    jwt: {
      certificate,
      clockSkewInSeconds: 60,
      cacheMaxEntries: 100,
      algorithms: ['RS256'],
      keyMaxAgeSeconds: 600,
      strict: false,
      issuers: {},
      ...overrides.jwt,
    },
    swt: { cacheMaxEntries: 100, cacheMaxAgeSeconds: 60, requireTokenType: true, ...overrides.swt },
  };
  if (!config.enableVerifyJwt || config.bootstrapFromKeyService) return config;
  const read = (file: string) => verificationKey(fs.readFileSync(file), config.jwt.algorithms);
  const kids = Object.entries(certificate);
  return { ...config, certificates: new Map(kids.map(([kid, file]) => [kid, read(file)])) };
}

/** The configured-certificate map of some signing keys (kid -> verification key). */
export function keyMap(
  keys: SigningKey[],
  algorithms: readonly Algorithm[] = DEFAULT_ALGORITHMS,
): Map<string, VerificationKey> {
  return new Map(keys.map((k) => [k.kid, verificationKey(k.publicKey, algorithms)]));
}

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, set: (ms: number) => (t = ms), advance: (ms: number) => (t += ms) };
}

/** A promise the test resolves by hand. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks run. */
export const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A key store's events, recorded. */
export function recordedEvents() {
  const lines: { level: 'info' | 'warn'; message: string; record: Record<string, unknown> }[] = [];
  return {
    lines,
    events: {
      info: (record: object, message: string) =>
        void lines.push({ level: 'info', message, record: record as Record<string, unknown> }),
      warn: (record: object, message: string) =>
        void lines.push({ level: 'warn', message, record: record as Record<string, unknown> }),
    },
  };
}

/**
 * What a key store makes of a kid: `key`, `unknown: <why>` (a TokenError: the token is refused
 * as any bad token), or `<code>: <description>` of the StatusError it answers with.
 */
export async function outcome(store: KeyStore, kid: string): Promise<string> {
  try {
    await store.resolve(kid);
    return 'key';
  } catch (err) {
    if (err instanceof TokenError) return `unknown: ${err.message}`;
    if (err instanceof StatusError) return `${err.code}: ${err.body.description}`;
    throw err;
  }
}
