import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError } from '@chain/errors';
import type { Algorithm } from './algorithms';
import type { Clock } from './clock';
import type { Logger } from './key-source';
import {
  importPublicKey,
  verificationKey,
  type KeyMaterial,
  type VerificationKey,
} from './public-key';
import { invalidToken, type TokenError } from './token-error';

/** The lifecycle of fetched keys (README "Keys and the key server"). */
export interface KeyPolicy {
  /** client.yml `request.timeout`: the longest wait for the key server (then ERR20005). */
  timeoutMs: number;
  /** security.yml `jwt.keyMaxAgeSeconds`; refreshed in the background from three quarters of it. */
  maxAgeMs: number;
}

export const DEFAULT_KEY_POLICY: KeyPolicy = { timeoutMs: 3000, maxAgeMs: 600_000 };
export const refreshAgeMs = (policy: KeyPolicy) => Math.floor((policy.maxAgeMs * 3) / 4);

// The fixed numbers of README "Keys and the key server".
export const NOT_FOUND_TTL_MS = 30_000;
export const FAILURE_TTL_MS = 5_000;
export const LOOKUP_BURST = 5;
export const LOOKUP_INTERVAL_MS = 1_000;
export const SET_COOLDOWN_MS = 5_000;
export const REFETCH_COOLDOWN_MS = 30_000;
export const MAX_KIDS = 1000;

/** Keys fetched from a key server (by kid, or a JWKS), as the key store asks for them. */
export interface FetchedKeys {
  current(kid: string): VerificationKey | undefined;
  resolve(kid: string): Promise<VerificationKey>;
  refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined>;
}

export interface FetchedKeysOptions {
  policy: KeyPolicy;
  now: Clock;
  algorithms: readonly Algorithm[];
  events?: Logger;
}

/** A kid no key is known for: an invalid token (401 ERR10000), never a server error. */
export const unknownKid = (reason = 'unknown kid'): TokenError => invalidToken(reason);

/** The key server could not be asked, failed, or answered something that is not a key. */
export function keyUnavailable(kid: string, cause: unknown): StatusError {
  return new StatusError('ERR20005', [kid], { cause });
}

/** The key source's answer, or a rejection after `ms` (a key source takes no abort signal). */
export function answerWithin<T>(answer: Promise<T>, ms: number): Promise<T> {
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`no answer within ${ms} ms`);
  });
  return Promise.race([answer, late]);
}

/** Sets an entry of a map, dropping the oldest when it holds `max` entries already. */
export function setBounded<V>(map: Map<string, V>, key: string, value: V, max = MAX_KIDS): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/**
 * A key of the key server as a verification key. One `jwt.algorithms` does not allow, or that
 * cannot be read, verifies nothing: its kid is unknown (401), and the operator is told why.
 */
export async function usable(
  kid: string,
  material: KeyMaterial,
  options: FetchedKeysOptions,
  pinned?: unknown,
): Promise<VerificationKey | undefined> {
  try {
    return verificationKey(await importPublicKey(material), options.algorithms, pinned);
  } catch (err) {
    options.events?.warn({ kid, reason: (err as Error).message }, 'key of the key server not used');
    return undefined;
  }
}

/** Whether two verification keys are the same key for the same algorithms. */
export function sameKey(a: VerificationKey | undefined, b: VerificationKey): boolean {
  return (
    a !== undefined &&
    a.key.equals(b.key) &&
    a.algorithms.length === b.algorithms.length &&
    a.algorithms.every((alg) => b.algorithms.includes(alg))
  );
}
