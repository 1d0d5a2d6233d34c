import { setTimeout as sleep } from 'node:timers/promises';
import { StatusError } from '@chain/errors';
import { MAX_KIDS } from './key-policy';
import { invalidToken, type TokenError } from './token-error';

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

/** Sets an entry of a map of kids, dropping the oldest when it holds MAX_KIDS already. */
export function setBounded<V>(map: Map<string, V>, kid: string, value: V): void {
  map.delete(kid);
  if (map.size >= MAX_KIDS) map.delete(map.keys().next().value as string);
  map.set(kid, value);
}
