/**
 * The two numbers of the key lifecycle that config sets: client.yml `request.timeout` and
 * security.yml `jwt.keyMaxAgeSeconds`.
 */
export interface KeyPolicy {
  /** Longest wait for one answer of the key server; past it the request gets ERR20005. */
  timeoutMs: number;
  /**
   * A fetched key (or key set) is used at most this long after it was fetched; from three
   * quarters of it on, it is fetched again in the background while it is still used.
   */
  maxAgeMs: number;
}

export const DEFAULT_KEY_POLICY: KeyPolicy = { timeoutMs: 3000, maxAgeMs: 600_000 };

/** From this age on a fetched key is refreshed in the background. */
export const refreshAgeMs = (policy: KeyPolicy) => Math.floor((policy.maxAgeMs * 3) / 4);

// The fixed numbers (README "Keys and the key server: the policy").
/** PEM by kid: a kid the key server does not know is answered "unknown" this long. */
export const NOT_FOUND_TTL_MS = 30_000;
/** A look-up that failed (server down, 5xx, time-out, not a key) is answered ERR20005 this long. */
export const FAILURE_TTL_MS = 5_000;
/** PEM by kid: look-ups of kids not yet known, this many at once, then one per interval. */
export const LOOKUP_BURST = 5;
export const LOOKUP_INTERVAL_MS = 1_000;
/** JWKS: the set is fetched again for a kid it does not hold at most this often. */
export const SET_COOLDOWN_MS = 5_000;
/** A fetched kid whose signature check fails is fetched again (a reused kid) at most this often. */
export const REFETCH_COOLDOWN_MS = 30_000;
/** Bound of each map of kids: keys, misses, kids waiting for a look-up. */
export const MAX_KIDS = 1000;
