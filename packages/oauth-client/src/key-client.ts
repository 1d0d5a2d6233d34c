import type { JsonWebKey } from 'node:crypto';
import type https from 'node:https';
import axios from 'axios';
import jwksClient from 'jwks-rsa';
import type { FetchedKey, KeySource } from '@chain/security';
import type { ClientConfig } from './client-config';
import type { ClientEvents, KeyFetchOutcome } from './client-events';
import { isNoSuchKid } from './light-oauth2-key';

export interface KeyClientOptions {
  /** client.yml `oauth.key`. */
  key: ClientConfig['oauth']['key'];
  /** The key client's secret (secret.yml `keyClientSecret`, else client.yml `client_secret`). */
  secret?: string;
  /** `jwks`: the key server publishes a JWKS (security.yml `jwt.keyResolver: JsonWebKeySet`). */
  jwks?: boolean;
  httpsAgent: https.Agent;
  timeoutMs: number;
  /** Told of each look-up's outcome (metrics). */
  events?: ClientEvents;
}

/**
 * Why a key could not be fetched: a message naming the server and what went wrong, and nothing
 * of the request (no credentials, no headers), so it can be logged as it is.
 */
export class KeyFetchError extends Error {
  override readonly name = 'KeyFetchError';
}

const PEM = /-----BEGIN (CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY)-----/;

/**
 * The client of the key distribution server: light-oauth2's `GET {server_url}{uri}/{kid}` with
 * Basic `client_id:secret` answering a PEM (a `kid` key source), or a JWKS at
 * `{server_url}{uri}` read through jwks-rsa (a `set` key source, every key at once). Rate
 * limiting, single flight and caching are the caller's (the security package's key store).
 */
export function createKeyClient(options: KeyClientOptions): KeySource {
  const { key, secret, httpsAgent, timeoutMs } = options;
  if (!key.server_url) throw new TypeError('client.yml oauth.key.server_url is not set');
  const base = key.server_url.replace(/\/+$/, '') + key.uri.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (key.client_id && secret !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${key.client_id}:${secret}`).toString('base64')}`;
  }
  const told = options.events?.keyFetched?.bind(options.events);
  if (options.jwks) {
    const fetchSet = jwkClient(base, headers, httpsAgent, timeoutMs);
    return {
      kind: 'set',
      fetch: told ? () => reported(fetchSet(), () => 'key_set', told) : fetchSet,
    };
  }
  const fetchKid = pemClient(base, headers, httpsAgent, timeoutMs);
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

function pemClient(
  base: string,
  headers: Record<string, string>,
  httpsAgent: https.Agent,
  timeoutMs: number,
): (kid: string) => Promise<string | undefined> {
  const http = axios.create({
    timeout: timeoutMs,
    httpsAgent,
    responseType: 'text',
    transformResponse: (data: unknown) => data,
    validateStatus: () => true,
    maxRedirects: 0,
    maxContentLength: 64 * 1024,
    proxy: false,
    headers: { ...headers, Accept: 'application/text, text/plain, application/x-pem-file' },
  });
  return async (kid) => {
    let response;
    try {
      response = await http.get(`${base}/${encodeURIComponent(kid)}`);
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'error';
      throw new KeyFetchError(`key server ${base} could not be reached (${code})`);
    }
    // 404, and light-oauth2's 400 ERR12030 INVALID_KEY_ID: the server has no such kid.
    if (isNoSuchKid(response.status, response.data)) return undefined;
    if (response.status !== 200) {
      throw new KeyFetchError(`key server ${base} answered HTTP ${response.status}`);
    }
    const body: unknown = response.data;
    if (typeof body !== 'string' || !PEM.test(body)) {
      throw new KeyFetchError(`key server ${base} did not answer a PEM key`);
    }
    return body;
  };
}

/**
 * The whole JWKS: every signing key with a kid (`use` absent or `sig`), as its JWK, with the
 * `alg` it pins. The keys are imported by the key store (node:crypto reads RSA, EC and OKP
 * JWKs); jwks-rsa fetches. An empty set is an answer (every kid unknown); an answer without a
 * `keys` list is a failure.
 */
function jwkClient(
  jwksUri: string,
  headers: Record<string, string>,
  httpsAgent: https.Agent,
  timeoutMs: number,
): () => Promise<ReadonlyMap<string, FetchedKey>> {
  const client = jwksClient({
    jwksUri,
    requestHeaders: headers,
    requestAgent: httpsAgent,
    timeout: timeoutMs,
    // The key store of the security package caches keys and limits look-ups.
    cache: false,
    rateLimit: false,
  });
  return async () => {
    let keys: unknown;
    try {
      keys = await client.getKeys();
    } catch (err) {
      const { name, code } = err as { name?: string; code?: string };
      throw new KeyFetchError(`key server ${jwksUri} JWKS could not be read (${code ?? name})`);
    }
    if (!Array.isArray(keys))
      throw new KeyFetchError(`key server ${jwksUri} did not answer a JWKS`);
    const set = new Map<string, FetchedKey>();
    for (const jwk of keys as Record<string, unknown>[]) {
      if (jwk === null || typeof jwk !== 'object' || typeof jwk.kid !== 'string') continue;
      if (jwk.use !== undefined && jwk.use !== 'sig') continue;
      set.set(jwk.kid, {
        material: jwk as JsonWebKey,
        ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}),
      });
    }
    return set;
  };
}
