import { StatusError } from '@chain/errors';
import { invalidToken, type TokenError } from './token-error';

/** A kid no key is known for: an invalid token (401 ERR10000), never a server error. */
export const unknownKid = (reason = 'unknown kid'): TokenError => invalidToken(reason);

/** The key server could not be asked, failed, or answered something that is not a key. */
export function keyUnavailable(kid: string, cause: unknown): StatusError {
  return new StatusError('ERR20005', [kid], { cause });
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Drops the oldest entries of a map that is full, so one more can be set. */
export function bounded<K, V>(map: Map<K, V>, max: number): Map<K, V> {
  while (map.size > 0 && map.size >= max) map.delete(map.keys().next().value as K);
  return map;
}
