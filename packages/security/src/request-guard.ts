import { ConfigError, STATUS, StatusError } from '@chain/errors';
import { decodeJwt } from 'jose';
import {
  createAuthorizer,
  verifiedCallerOf,
  type AuthInfo,
  type AuthRequest,
  type TokenVerifier,
} from './authorizer.js';
import type { ClaimChecks } from './claims.js';
import { createIntrospectionVerifier, type IntrospectionSource } from './introspection.js';
import { createJwtVerifier, MAX_TOKEN_LENGTH } from './jwt-verifier.js';
import type { KeyPolicy } from './key-policy.js';
import type { Clock, KeySource, Logger } from './key-source.js';
import { KeyStore } from './key-store.js';
import { MockTokenIssuer } from './mock-jwt.js';
import { verificationKey, type VerificationKey } from './public-key.js';
import { pathPrefixMatcher } from './request-rules.js';
import type { SecurityConfig } from './security-config.js';
import type { ReplayStore } from './dpop-replay-cache.js';
import { invalidToken } from './token-error.js';
import { createTokenBinding } from './token-binding.js';

export interface RequestGuardOptions {
  config: SecurityConfig;
  logger?: Logger;
  keySource?: KeySource;
  /** The key server of a `jwt.issuers` issuer, when it names one. */
  keySourceOf?: (issuer: string) => KeySource | undefined;
  keyPolicy?: Partial<KeyPolicy>;
  claims?: ClaimChecks;
  /** Needed by `enableVerifySwt` without `enableVerifyJwt`. */
  introspection?: IntrospectionSource;
  now?: Clock;
  /** For the production check of `enableMockJwt`. */
  env?: NodeJS.ProcessEnv;
  /**
   * A DPoP proof's `htu` origins when `dpop.origins` names none (README); asked per proof (a port
   * may be known only once it listens). Without either, every DPoP proof is refused.
   */
  ownOrigins?: () => readonly string[];
  /** Where the `jti` of accepted DPoP proofs are kept: in this process (default) or shared. */
  replayStore?: ReplayStore;
}

/** The ids and the address are for the log lines only. */
export interface GuardRequest extends AuthRequest {
  correlationId?: string;
  traceId?: string;
  remoteAddress?: string;
}

export interface RequestGuard {
  /** Undefined for a path of `skipPathPrefixes`; absent when nothing is verified. */
  check?: (request: GuardRequest) => Promise<AuthInfo | undefined>;
  mockIssuer?: MockTokenIssuer;
}

export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  const { config, claims, logger } = options;
  const now = options.now ?? Date.now;
  if (config.enableMockJwt && (options.env ?? process.env).NODE_ENV === 'production') {
    throw new ConfigError(
      'security.yml',
      'enableMockJwt',
      'must be false when NODE_ENV=production (the mock token endpoint is for tests only)',
    );
  }
  const mockIssuer = config.enableMockJwt
    ? new MockTokenIssuer(now, { issuer: claims?.issuer?.[0], audience: claims?.audience?.[0] })
    : undefined;
  if (!config.enableVerifyJwt && !config.enableVerifySwt) return { mockIssuer };
  const authorize = createAuthorizer(tokenVerifier(options, now, mockIssuer), {
    ...config,
    confirm: createTokenBinding(config.dpop, now, options.ownOrigins, options.replayStore),
  });
  const { logJwtToken, logClientUserScope } = config;

  const check = async (request: GuardRequest): Promise<AuthInfo | undefined> => {
    try {
      const authorized = await authorize(request);
      if (!authorized) return undefined;
      const { auth, token } = authorized;
      if (logger && (logJwtToken || logClientUserScope)) {
        // light-4j's AuditHandler; an opaque token tells a reader nothing and stays valid.
        const { clientId: client_id, userId: user_id, scopes } = auth;
        const record = {
          ...(logJwtToken && !auth.introspected && { jwt: token }),
          ...(logClientUserScope && { client_id, user_id, scope: scopes.join(' ') }),
          correlationId: request.correlationId,
          traceId: request.traceId,
        };
        logger.info(record, 'jwt verified');
      }
      return auth;
    } catch (err) {
      if (logger) logRefusal(logger, request, err);
      throw err;
    }
  };
  return { check, mockIssuer };
}

/** With both, a JWT starts with "eyJ" and has a dot, as light-4j's `StringUtils.isJwtToken`. */
function tokenVerifier(
  options: RequestGuardOptions,
  now: Clock,
  mockIssuer: MockTokenIssuer | undefined,
): TokenVerifier {
  const { config, introspection } = options;
  const swt =
    config.enableVerifySwt && introspection
      ? createIntrospectionVerifier(introspection, config.swt, now, options.claims)
      : undefined;
  if (!config.enableVerifyJwt) {
    if (swt) return swt;
    throw new TypeError(
      'security.yml enableVerifySwt without enableVerifyJwt needs an introspection source',
    );
  }
  const { algorithms, strict, maxTokenAgeSeconds, issuers } = config.jwt;
  const storeOf = (configured: ReadonlyMap<string, VerificationKey>, source?: KeySource) => {
    const keys = new KeyStore(configured, {
      source,
      policy: { maxAgeMs: config.jwt.keyMaxAgeSeconds * 1000, ...options.keyPolicy },
      algorithms,
      now,
      events: options.logger,
    });
    if (config.bootstrapFromKeyService) keys.preload().catch(() => undefined);
    return keys;
  };
  const certificates = new Map(config.certificates);
  if (mockIssuer) {
    certificates.set(mockIssuer.kid, verificationKey(mockIssuer.publicKey, ['RS256']));
  }
  const strictness = { strict, maxTokenAgeSeconds };
  const listed = Object.entries(issuers);
  const byIssuer = new Map(
    listed.map(([iss, entry]) => [
      iss,
      {
        keys: storeOf(entry.certificates ?? new Map(), options.keySourceOf?.(iss)),
        claims: { issuer: [iss], audience: entry.audience, ...strictness },
        paths: entry.pathPrefixes && pathPrefixMatcher(entry.pathPrefixes.map((p) => [p, true])),
      },
    ]),
  );
  const verify = createJwtVerifier({
    keys: listed.length
      ? (iss) => (typeof iss === 'string' ? byIssuer.get(iss) : undefined)
      : storeOf(certificates, options.keySource),
    clockSkewInSeconds: config.jwt.clockSkewInSeconds,
    now,
    cacheMaxEntries: config.enableJwtCache ? config.jwt.cacheMaxEntries : 0,
    algorithms: mockIssuer && !algorithms.includes('RS256') ? [...algorithms, 'RS256'] : algorithms,
    claims: { ...options.claims, ...strictness },
  });
  // security.yml `jwt.issuers.<iss>.pathPrefixes`: an issuer's tokens elsewhere are refused.
  const withinPaths: TokenVerifier = async (token, request) => {
    const verified = await verify(token);
    const allowed = byIssuer.get(verified.claims.iss as string)?.paths;
    if (allowed && !allowed(request.path ?? '')) {
      throw invalidToken('iss is not accepted on this path (pathPrefixes)');
    }
    return verified;
  };
  const jwt = listed.length ? withinPaths : verify;
  if (!swt) return jwt;
  return (token, request) =>
    token.startsWith('eyJ') && token.includes('.') ? jwt(token, request) : swt(token, request);
}

/** ERR10010 is the renderer's to log. */
function logRefusal(logger: Logger, request: GuardRequest, err: unknown): void {
  if (!(err instanceof StatusError) || err.code === 'ERR10010') return;
  const caller = verifiedCallerOf(err);
  const claimed = caller ? undefined : claimedClientId(request.authorization);
  const record = {
    code: err.code,
    reason: reasonOf(err, request),
    correlationId: request.correlationId,
    traceId: request.traceId,
    remoteAddress: request.remoteAddress,
    ...(caller ? { clientId: caller.clientId } : claimed && { claimedClientId: claimed }),
  };
  const { challenge } = STATUS[err.code];
  const message = challenge === 'insufficient_scope' ? 'scope refused' : 'token refused';
  logger.warn(record, challenge ? message : 'token not checked');
}

function reasonOf(err: StatusError, request: GuardRequest): string {
  const cause = err.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  if (err.code === 'ERR10002') {
    return request.authorization === undefined
      ? 'no Authorization header'
      : 'Authorization is not Bearer <token> or DPoP <token>';
  }
  return err.body.description;
}

const PRINTABLE_ID = /^[\x21-\x7e]{1,128}$/;

/** Unverified, but it tells an operator which client is misconfigured. */
function claimedClientId(authorization: string | string[] | undefined): string | undefined {
  if (typeof authorization !== 'string') return undefined;
  const token = authorization.trim().split(/\s+/)[1];
  if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;
  try {
    const id = decodeJwt(token).client_id;
    return typeof id === 'string' && PRINTABLE_ID.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
