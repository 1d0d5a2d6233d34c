import { StatusError } from '@chain/errors';
import type { OutgoingTrace } from './call-headers';
import type { ClientEvents } from './client-events';
import type { DpopKey } from './dpop-key';
import type { RenewableToken } from './renewable-token';

/**
 * The own token of one client at one auth server, for the calls of a downstream: kept, renewed
 * as client.yml says, shared by every call. What a downstream call asks for its credentials.
 */
export class TokenSource {
  constructor(
    readonly token: RenewableToken,
    private readonly events?: ClientEvents,
    private readonly now: () => number = Date.now,
    /** The key its tokens are bound to (DPoP): every call with them carries a new proof. */
    readonly dpop?: DpopKey,
  ) {}

  get clientId(): string {
    return this.token.clientId;
  }

  /**
   * The token, or ERR10009 (408) when it cannot be had; the StatusError keeps the
   * TokenFetchError as its cause. A caller waits at most for one token request, which client.yml
   * `request.timeout` bounds. A token at hand (the usual case) costs no promise of its own.
   */
  async get(trace?: OutgoingTrace): Promise<string> {
    const ready = this.token.peek(undefined, trace);
    if (ready) return ready.value;
    const startedAt = this.now();
    let ok = false;
    try {
      const { value } = await this.token.get(trace);
      ok = true;
      return value;
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    } finally {
      this.events?.tokenWaited?.({ clientId: this.clientId, ms: this.now() - startedAt, ok });
    }
  }

  /** A downstream refused `value` as an invalid token: the next call waits for a new one. */
  invalidate(value: string): void {
    this.token.invalidate(value);
  }
}
