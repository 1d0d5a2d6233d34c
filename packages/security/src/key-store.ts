import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms.js';
import { DEFAULT_KEY_POLICY, type KeyPolicy } from './key-policy.js';
import type { Clock, Logger, KeySource } from './key-source.js';
import { KeySetCache } from './key-set-cache.js';
import { KidLookups } from './kid-lookups.js';
import type { VerificationKey } from './public-key.js';
import { invalidToken } from './token-error.js';

export class KeyStore {
  private readonly fetched?: KidLookups | KeySetCache;

  constructor(
    private readonly configured: ReadonlyMap<string, VerificationKey>,
    options: {
      source?: KeySource;
      policy?: Partial<KeyPolicy>;
      algorithms?: readonly Algorithm[];
      now: Clock;
      events?: Logger;
    },
  ) {
    const { source, policy, algorithms = DEFAULT_ALGORITHMS, ...clockAndEvents } = options;
    const context = { ...clockAndEvents, policy: { ...DEFAULT_KEY_POLICY, ...policy }, algorithms };
    if (source?.kind === 'kid') this.fetched = new KidLookups(source, context);
    if (source?.kind === 'set') this.fetched = new KeySetCache(source, context);
  }

  current(kid: string): VerificationKey | undefined {
    return this.configured.get(kid) ?? this.fetched?.current(kid);
  }

  async resolve(kid: string): Promise<VerificationKey> {
    const key = this.current(kid);
    if (key) return key;
    if (!this.fetched) throw invalidToken('unknown kid');
    return this.fetched.resolve(kid);
  }

  /** After a fetched key failed a signature check (a reused kid); certificates never are. */
  async refetch(kid: string, stale: VerificationKey): Promise<VerificationKey | undefined> {
    if (!this.fetched || this.configured.get(kid) === stale) return undefined;
    return this.fetched.refetch(kid, stale);
  }

  async preload(): Promise<void> {
    if (this.fetched instanceof KeySetCache) await this.fetched.load();
  }
}
