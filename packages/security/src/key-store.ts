import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms';
import type { Clock } from './clock';
import { DEFAULT_KEY_POLICY, unknownKid, type FetchedKeys, type KeyPolicy } from './key-policy';
import type { Logger, KeySource } from './key-source';
import { KeySetCache } from './key-set-cache';
import { KidLookups } from './kid-lookups';
import type { VerificationKey } from './public-key';

export interface KeyStoreOptions {
  /** Where unknown kids are looked up (none: an unknown kid is invalid). */
  source?: KeySource;
  policy?: Partial<KeyPolicy>;
  /** security.yml `jwt.algorithms`: what fetched keys may verify. */
  algorithms?: readonly Algorithm[];
  now: Clock;
  events?: Logger;
}

/**
 * The verification keys by kid: the configured certificates (for the life of the process), then
 * keys fetched from the key server, by kid or as a JWKS.
 */
export class KeyStore {
  private readonly fetched?: FetchedKeys;

  constructor(
    private readonly configured: ReadonlyMap<string, VerificationKey>,
    options: KeyStoreOptions,
  ) {
    const context = {
      policy: { ...DEFAULT_KEY_POLICY, ...options.policy },
      now: options.now,
      algorithms: options.algorithms ?? DEFAULT_ALGORITHMS,
      events: options.events,
    };
    const { source } = options;
    if (source?.kind === 'kid') this.fetched = new KidLookups(source, context);
    if (source?.kind === 'set') this.fetched = new KeySetCache(source, context);
  }

  /** The key of a kid at hand and within its maximum age, without waiting. */
  current(kid: string): VerificationKey | undefined {
    return this.configured.get(kid) ?? this.fetched?.current(kid);
  }

  /** The key of a kid, fetched if needed: a TokenError (no such kid: 401) or ERR20005. */
  async resolve(kid: string): Promise<VerificationKey> {
    const key = this.current(kid);
    if (key) return key;
    if (!this.fetched) throw unknownKid();
    return this.fetched.resolve(kid);
  }

  /**
   * After a fetched key failed a signature check: the kid fetched again (a reused kid), at most
   * once per REFETCH_COOLDOWN_MS; configured certificates never are.
   */
  async refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined> {
    if (!this.fetched || this.configured.get(kid) === stale) return undefined;
    return this.fetched.refetch(kid, stale);
  }

  /** security.yml `bootstrapFromKeyService` with a JWKS: the set fetched at start. */
  async preload(): Promise<void> {
    if (this.fetched instanceof KeySetCache) await this.fetched.preload();
  }
}
