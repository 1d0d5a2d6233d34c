import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms';
import type { Clock } from './clock';
import { unknownKid } from './key-errors';
import { DEFAULT_KEY_POLICY, type KeyPolicy } from './key-policy';
import type { KeyEvents, KeySource } from './key-source';
import { KeySetCache } from './key-set-cache';
import { KidLookups, type FetchedKeys } from './kid-lookups';
import type { VerificationKey } from './public-key';

export interface KeyStoreOptions {
  /** Where unknown kids are looked up (none: an unknown kid is invalid). */
  source?: KeySource;
  policy?: Partial<KeyPolicy>;
  /** security.yml `jwt.algorithms`: what fetched keys may verify. */
  algorithms?: readonly Algorithm[];
  now: Clock;
  events?: KeyEvents;
}

/**
 * The verification keys by kid: the configured certificates (kept for the life of the process),
 * then keys fetched from the key server (by kid, or as a JWKS), each within its maximum age.
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

  /** The key of a kid already at hand and within its maximum age, without waiting. */
  current(kid: string): VerificationKey | undefined {
    return this.configured.get(kid) ?? this.fetched?.current(kid);
  }

  /**
   * The key of a kid: at hand, or fetched. Throws a TokenError (no such kid: 401) or ERR20005
   * (the key server could not be asked, failed, or answered something that is not a key).
   */
  async resolve(kid: string): Promise<VerificationKey> {
    const key = this.current(kid);
    if (key) return key;
    if (!this.fetched) throw unknownKid();
    return this.fetched.resolve(kid);
  }

  /**
   * After a fetched key failed a signature check: the kid's key fetched again (a provider that
   * reused a kid), at most once per REFETCH_COOLDOWN_MS per kid. Undefined when there is no
   * other key to try; configured certificates are never fetched.
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
