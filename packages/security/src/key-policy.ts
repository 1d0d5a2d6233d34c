/**
 * How keys fetched from the key distribution server are looked up, kept and refreshed. The
 * defaults are the numbers the README gives; tests pass their own.
 */
export interface KeyPolicy {
  /** Longest wait for one answer of the key server; past it the request gets ERR20005. */
  timeoutMs: number;
  /**
   * A fetched key (or key set) is used at most this long after it was fetched; from three
   * quarters of it on, it is fetched again in the background while it is still used. A key the
   * key server no longer has is refused from then on.
   */
  maxAgeMs: number;
  /** PEM by kid: a kid the key server does not know is answered "unknown" this long without asking again. */
  notFoundTtlMs: number;
  /** A look-up that failed (server down, 5xx, time-out, not a key) is answered ERR20005 this long. */
  failureTtlMs: number;
  /** PEM by kid: look-ups of kids not yet known, this many at once... */
  lookupBurst: number;
  /** ...then one per this interval, the kid asked for most often first. */
  lookupIntervalMs: number;
  /** JWKS: the key set is fetched again for a kid it does not hold at most this often. */
  setCooldownMs: number;
  /** A fetched kid whose signature check fails is fetched again (a reused kid) at most this often. */
  refetchCooldownMs: number;
  /** Bound of each map of kids: keys, misses, kids waiting for a look-up. */
  maxEntries: number;
}

export const DEFAULT_KEY_POLICY: KeyPolicy = {
  timeoutMs: 3000,
  maxAgeMs: 600_000,
  notFoundTtlMs: 30_000,
  failureTtlMs: 5_000,
  lookupBurst: 5,
  lookupIntervalMs: 1_000,
  setCooldownMs: 5_000,
  refetchCooldownMs: 30_000,
  maxEntries: 1000,
};

/** From this age on a fetched key is refreshed in the background. */
export const refreshAgeMs = (policy: KeyPolicy) => Math.floor((policy.maxAgeMs * 3) / 4);
