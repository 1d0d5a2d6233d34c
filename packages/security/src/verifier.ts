import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { loadConfigSource } from '@chain/config';
import { toStatusError, wwwAuthenticate, type StatusError } from '@chain/errors';
import { verifiedCallerOf, type AuthInfo } from './authorizer.js';
import type { Logger } from './key-source.js';
import type { MockTokenIssuer } from './mock-jwt.js';
import { createRequestGuard, type RequestGuardOptions } from './request-guard.js';
import { resourceIdentifier, resourceMetadataUrl } from './resource-metadata.js';
import { applyPassThrough } from './request-rules.js';
import { isCheckedConfig, securityConfigSchema, type SecurityConfig } from './security-config.js';

export interface VerifierOptions extends Omit<RequestGuardOptions, 'config'> {
  /**
   * security.yml: its path, or its keys as YAML parses them, checked by the services' schema with
   * their messages (a parsed object's paths resolve against the working folder).
   */
  config: string | Record<string, unknown>;
}

/** What any HTTP server knows of a request. */
export interface VerifyRequest {
  method: string;
  /** As sent; a query is cut off. */
  path: string;
  /** Edited as light-4j does: the SWT client headers go, the `passThroughClaims` headers are set. */
  headers: IncomingHttpHeaders;
  /** One must be held; `[]`: none; undefined: no spec operation (ERR10007). */
  requiredScopes: readonly string[] | undefined;
  /** The connection, whose verified client certificate a `cnf` `x5t#S256` token is bound to. */
  socket?: net.Socket | null;
  /** Instead of `socket`: the certificate's RFC 8705 `x5t#S256`. */
  clientCertThumbprint?: string;
  /** For the log lines only. */
  correlationId?: string;
  traceId?: string;
  remoteAddress?: string;
}

/** The catalogue's answer, as the services send it. */
export interface Refusal {
  status: number;
  /** `Content-Type`, and `WWW-Authenticate` for a 401 or 403. */
  headers: Record<string, string>;
  /** The JSON body. */
  body: string;
  error: StatusError;
}

/** `auth` undefined when passed: nothing verified (`skipPathPrefixes`, or verification off). */
export type Verdict =
  { ok: true; auth: AuthInfo | undefined } | { ok: false; refusal: Refusal; auth?: AuthInfo };

export interface Verifier {
  readonly config: SecurityConfig;
  /** Never rejects. A 403 keeps its verified caller in `auth`. */
  verify(request: VerifyRequest): Promise<Verdict>;
  /** False when security.yml verifies nothing (`verify` only removes pass-through headers). */
  readonly verifies: boolean;
  readonly mockIssuer?: MockTokenIssuer;
}

export function createVerifier(options: VerifierOptions): Verifier {
  const config = loadSecurityConfig(options.config, options.logger);
  const { check, mockIssuer } = createRequestGuard({ ...options, config });
  const { passThroughClaims: mapping, enableVerifySwt } = config;
  const idHeader = enableVerifySwt ? config.swtClientIdHeader.toLowerCase() : undefined;
  const secretHeader = enableVerifySwt ? config.swtClientSecretHeader.toLowerCase() : undefined;
  const resource = resourceIdentifier(config, options.ownOrigins);

  const verify = async (request: VerifyRequest): Promise<Verdict> => {
    const { headers, path } = request;
    // Whatever the caller sent under a pass-through header goes, verified or not.
    applyPassThrough(headers, mapping);
    if (!check) return { ok: true, auth: undefined };
    const swtClientId = idHeader ? headers[idHeader] : undefined;
    const swtClientSecret = secretHeader ? headers[secretHeader] : undefined;
    if (idHeader) delete headers[idHeader];
    if (secretHeader) delete headers[secretHeader];
    try {
      const auth = await check({
        ...request, // the method, the scopes, the ids and the address as they are
        path: path.split('?', 1)[0],
        clientCertThumbprint:
          request.clientCertThumbprint ?? clientCertificateThumbprint(request.socket),
        authorization: headers.authorization,
        scopeToken: headers['x-scope-token'],
        dpop: headers.dpop,
        scopeTokenDpop: headers['x-scope-token-dpop'],
        swtClientId,
        swtClientSecret,
      });
      if (auth) applyPassThrough(headers, mapping, auth.passThrough);
      return { ok: true, auth };
    } catch (err) {
      const error = toStatusError(err);
      const at = resource();
      // Every challenge names the metadata (RFC 9728 section 5.1), whatever made the refusal.
      if (at !== undefined && error.headers['WWW-Authenticate'] !== undefined) {
        const challenge = { ...error.challenge, resourceMetadata: resourceMetadataUrl(at) };
        error.headers['WWW-Authenticate'] = wwwAuthenticate(error.body, challenge)!;
      }
      return { ok: false, refusal: refusalOf(error), auth: verifiedCallerOf(err) };
    }
  };
  return { config, verify, verifies: check !== undefined, mockIssuer };
}

function refusalOf(error: StatusError): Refusal {
  const headers = { 'Content-Type': 'application/json', ...error.headers };
  return { status: error.statusCode, headers, body: JSON.stringify(error.body), error };
}

/** A config the schema made is taken as it is. Warnings go to `logger`, as a service's. */
export function loadSecurityConfig(
  source: string | Record<string, unknown>,
  logger?: Logger,
): SecurityConfig {
  if (typeof source !== 'string' && isCheckedConfig(source)) return source;
  return loadConfigSource(source, 'security', securityConfigSchema, logger).value;
}

const thumbprints = new WeakMap<object, string | undefined>();

/** The RFC 8705 `x5t#S256` of a TLS connection's verified client certificate, once a connection. */
export function clientCertificateThumbprint(socket: net.Socket | null | undefined) {
  const tls = socket as Partial<TLSSocket> | null | undefined;
  if (!tls?.authorized || !tls.getPeerX509Certificate) return undefined;
  if (thumbprints.has(tls)) return thumbprints.get(tls);
  const cert = tls.getPeerX509Certificate();
  const thumbprint = cert && createHash('sha256').update(cert.raw).digest('base64url');
  thumbprints.set(tls, thumbprint);
  return thumbprint;
}
