import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError } from '@chain/errors';
import type { Algorithm } from './algorithms.js';
import type { Clock, Logger } from './key-source.js';
import {
  importPublicKey,
  verificationKey,
  type KeyMaterial,
  type VerificationKey,
} from './public-key.js';

export interface KeyPolicy {
  /** client.yml `request.timeout`. */
  timeoutMs: number;
  /** security.yml `jwt.keyMaxAgeSeconds`. */
  maxAgeMs: number;
}

export const DEFAULT_KEY_POLICY: KeyPolicy = { timeoutMs: 3000, maxAgeMs: 600_000 };
export const refreshAgeMs = (policy: KeyPolicy) => Math.floor((policy.maxAgeMs * 3) / 4);

export const NOT_FOUND_TTL_MS = 30_000;
export const FAILURE_TTL_MS = 5_000;
export const LOOKUP_BURST = 5;
export const LOOKUP_INTERVAL_MS = 1_000;
export const SET_COOLDOWN_MS = 5_000;
export const REFETCH_COOLDOWN_MS = 30_000;
export const MAX_KIDS = 1000;

export interface FetchedKeysOptions {
  policy: KeyPolicy;
  now: Clock;
  algorithms: readonly Algorithm[];
  events?: Logger;
}

export function keyUnavailable(kid: string, cause: unknown): StatusError {
  return new StatusError('ERR20005', [kid], { cause });
}

/** A key source takes no abort signal. */
export function answerWithin<T>(answer: Promise<T>, ms: number): Promise<T> {
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`no answer within ${ms} ms`);
  });
  return Promise.race([answer, late]);
}

/** A key `jwt.algorithms` does not allow, or unreadable: its kid is unknown, the operator told why. */
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

export function sameKey(a: VerificationKey | undefined, b: VerificationKey): boolean {
  return (
    a !== undefined &&
    a.key.equals(b.key) &&
    a.algorithms.length === b.algorithms.length &&
    a.algorithms.every((alg) => b.algorithms.includes(alg))
  );
}
