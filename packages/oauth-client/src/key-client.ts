import type { JsonWebKey } from 'node:crypto';
import type { FetchedKey, KeySource } from '@chain/security';
import type { ClientConfig } from './client-config';
import type { ClientEvents, KeyFetchOutcome } from './client-events';
import { isNoSuchKid } from './light-oauth2-key';
import type { Transport, TransportError, TransportResponse } from './transport';

export interface KeyClientOptions {
  /** client.yml `oauth.key`, with its server. */
  key: ClientConfig['oauth']['key'] & { server_url: string };
  /** The key client's secret (secret.yml `keyClientSecret`, else client.yml `client_secret`). */
  secret?: string;
  /** `jwks`: the key server publishes a JWKS (security.yml `jwt.keyResolver: JsonWebKeySet`). */
  jwks?: boolean;
  /** The service's `HttpClient`. */
  http: Transport;
  /** client.yml `request.timeout`. */
  timeoutMs: number;
  /** Told of each look-up's outcome (metrics). */
  events?: ClientEvents;
}

/**
 * Why a key could not be fetched: a message naming the server and what went wrong, and nothing
 * of the request (no credentials, no headers), so it can be logged as it is. The cause is the
 * transport's failure, when there was no answer.
 */
export class KeyFetchError extends Error {
  override readonly name = 'KeyFetchError';
}

const PEM = /-----BEGIN (CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY)-----/;
/** Largest answer read: a PEM certificate; a key set. */
const MAX_PEM = 64 * 1024;
const MAX_JWKS = 1024 * 1024;

/**
 * The client of the key distribution server: light-oauth2's `GET {server_url}{uri}/{kid}` with
 * Basic `client_id:secret` answering a PEM (a `kid` key source), or a JWKS at
 * `{server_url}{uri}` (a `set` key source, every key at once, each the JWK as published).
 * Rate limiting, single flight and caching are the caller's (the security package's key store).
 */
export function createKeyClient(options: KeyClientOptions): KeySource {
  const { key, secret, http, timeoutMs } = options;
  const base = key.server_url.replace(/\/+$/, '') + key.uri.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (key.client_id && secret !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${key.client_id}:${secret}`).toString('base64')}`;
  }
  /** One GET; no answer is a KeyFetchError naming the server. */
  const get = async (url: string, accept: string, maxBodyBytes: number) => {
    try {
      return await http.request({
        method: 'GET',
        url: new URL(url),
        headers: { ...headers, Accept: accept },
        timeoutMs,
        maxBodyBytes,
      });
    } catch (err) {
      const { kind, code } = err as TransportError;
      const why =
        kind === 'timeout'
          ? `did not answer within ${timeoutMs} ms`
          : kind === 'body_too_large'
            ? `answered more than ${maxBodyBytes} bytes`
            : `could not be reached (${code ?? kind})`;
      throw new KeyFetchError(`key server ${base} ${why}`, { cause: err });
    }
  };
  const told = options.events?.keyFetched?.bind(options.events);
  if (options.jwks) {
    const fetchSet = async () => keySet(base, await get(base, 'application/json', MAX_JWKS));
    return {
      kind: 'set',
      fetch: told ? () => reported(fetchSet(), () => 'key_set', told) : fetchSet,
    };
  }
  const fetchKid = async (kid: string) => {
    const url = `${base}/${encodeURIComponent(kid)}`;
    const accept = 'application/text, text/plain, application/x-pem-file';
    return pemOf(base, await get(url, accept, MAX_PEM));
  };
  return {
    kind: 'kid',
    fetch: told
      ? (kid) => reported(fetchKid(kid), (pem) => (pem ? 'key' : 'no_such_kid'), told)
      : fetchKid,
  };
}

/** Tells the outcome of a look-up, then gives its result or failure unchanged. */
async function reported<T>(
  lookup: Promise<T>,
  outcome: (result: T) => KeyFetchOutcome,
  told: NonNullable<ClientEvents['keyFetched']>,
): Promise<T> {
  let result: T;
  try {
    result = await lookup;
  } catch (err) {
    told({ outcome: 'failed' });
    throw err;
  }
  told({ outcome: outcome(result) });
  return result;
}

/** light-oauth2's answer about one kid: the PEM, undefined for "no such kid", or a failure. */
function pemOf(base: string, answer: TransportResponse): string | undefined {
  // 404, and light-oauth2's 400 ERR12030 INVALID_KEY_ID: the server has no such kid.
  if (isNoSuchKid(answer.status, answer.body)) return undefined;
  if (answer.status !== 200)
    throw new KeyFetchError(`key server ${base} answered HTTP ${answer.status}`);
  if (!PEM.test(answer.body))
    throw new KeyFetchError(`key server ${base} did not answer a PEM key`);
  return answer.body;
}

/**
 * The whole JWKS: every signing key with a kid (`use` absent or `sig`), as its JWK, with the
 * `alg` it pins; the key store imports them. An empty set is an answer (every kid unknown); an
 * answer without a `keys` list is a failure.
 */
function keySet(base: string, answer: TransportResponse): ReadonlyMap<string, FetchedKey> {
  if (answer.status !== 200)
    throw new KeyFetchError(`key server ${base} answered HTTP ${answer.status}`);
  let keys: unknown;
  try {
    keys = (JSON.parse(answer.body) as { keys?: unknown } | null)?.keys;
  } catch {
    // not JSON: not a JWKS
  }
  if (!Array.isArray(keys)) throw new KeyFetchError(`key server ${base} did not answer a JWKS`);
  const set = new Map<string, FetchedKey>();
  for (const jwk of keys as (Record<string, unknown> | null)[]) {
    if (jwk === null || typeof jwk !== 'object' || typeof jwk.kid !== 'string') continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    set.set(jwk.kid, {
      material: jwk as JsonWebKey,
      ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}),
    });
  }
  return set;
}
