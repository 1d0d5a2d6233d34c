import type { JsonWebKey } from 'node:crypto';
import type { FetchedKey, KeySource } from '@chain/security';
import type { ClientConfig } from './client-config.js';
import type { ClientEvents, KeyFetchOutcome } from './client-events.js';
import { isNoSuchKid } from './light-oauth2-key.js';
import {
  jsonObject,
  noAnswer,
  type Transport,
  type TransportError,
  type TransportResponse,
} from '@chain/http';

export interface KeyClientOptions {
  key: ClientConfig['oauth']['key'] & { server_url: string };
  secret?: string;
  /** security.yml `jwt.keyResolver: JsonWebKeySet`. */
  jwks?: boolean;
  http: Transport;
  timeoutMs: number;
  events?: ClientEvents;
}

/** Names the server and nothing of the request. */
export class KeyFetchError extends Error {
  override readonly name = 'KeyFetchError';
}

const PEM = /-----BEGIN (CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY)-----/;
const MAX_PEM = 64 * 1024;
const MAX_JWKS = 1024 * 1024;

/** light-oauth2's PEM by kid at `{server_url}{uri}/{kid}`, or a JWKS at `{server_url}{uri}`. */
export function createKeyClient(options: KeyClientOptions): KeySource {
  const { key, secret, http, timeoutMs, events } = options;
  const base = key.server_url.replace(/\/+$/, '') + key.uri.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (key.client_id && secret !== undefined) {
    // light-oauth2's key service reads the pair as it is (not form-encoded).
    headers.Authorization = `Basic ${Buffer.from(`${key.client_id}:${secret}`).toString('base64')}`;
  }
  const get = (url: string, accept: string, maxBodyBytes: number) => {
    const request = {
      method: 'GET',
      url: new URL(url),
      headers: { ...headers, Accept: accept },
      timeoutMs,
      maxBodyBytes,
    };
    return http.request(request).catch((err: TransportError) => {
      throw new KeyFetchError(`key server ${base} ${noAnswer(err, request)}`, { cause: err });
    });
  };
  const reported = async <T>(lookup: Promise<T>, outcome: (result: T) => KeyFetchOutcome) => {
    const result = await lookup.catch((err: unknown) => {
      events?.keyFetched?.({ outcome: 'failed' });
      throw err;
    });
    events?.keyFetched?.({ outcome: outcome(result) });
    return result;
  };
  if (options.jwks) {
    const fetchSet = async () => keySet(base, await get(base, 'application/json', MAX_JWKS));
    return { kind: 'set', fetch: () => reported(fetchSet(), () => 'key_set') };
  }
  const fetchKid = async (kid: string) => {
    const url = `${base}/${encodeURIComponent(kid)}`;
    const accept = 'application/text, text/plain, application/x-pem-file';
    return pemOf(base, await get(url, accept, MAX_PEM));
  };
  return {
    kind: 'kid',
    fetch: (kid) => reported(fetchKid(kid), (pem) => (pem ? 'key' : 'no_such_kid')),
  };
}

/** undefined: "no such kid". */
function pemOf(base: string, answer: TransportResponse): string | undefined {
  if (isNoSuchKid(answer.status, answer.body)) return undefined;
  if (answer.status !== 200)
    throw new KeyFetchError(`key server ${base} answered HTTP ${answer.status}`);
  if (!PEM.test(answer.body))
    throw new KeyFetchError(`key server ${base} did not answer a PEM key`);
  return answer.body;
}

/** An empty set is an answer (every kid unknown); no `keys` list is a failure. */
function keySet(base: string, answer: TransportResponse): ReadonlyMap<string, FetchedKey> {
  if (answer.status !== 200)
    throw new KeyFetchError(`key server ${base} answered HTTP ${answer.status}`);
  const keys = jsonObject(answer.body)?.keys;
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
