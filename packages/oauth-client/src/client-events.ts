import type { CircuitState } from './circuit-breaker';
import type { TokenFetchErrorCode } from './token-fetch-error';

/** What made a token be fetched (`invalid_token`: refused downstream). */
export type RenewalTrigger = 'cold' | 'early' | 'expired' | 'invalid_token';

export type KeyFetchOutcome = 'key' | 'key_set' | 'no_such_kid' | 'failed';

export type RetryReason = 'stale_connection' | 'invalid_token' | 'dpop_proof_replayed';

/**
 * What the client side reports (metrics, logs). None is called on the hot path of a call that
 * needs nothing (a token at hand, a closed circuit, one attempt).
 */
export interface ClientEvents {
  tokenRenewed?(event: { clientId: string; trigger: RenewalTrigger; ms: number }): void;
  tokenRenewalFailed?(event: {
    clientId: string;
    trigger: RenewalTrigger;
    cause: TokenFetchErrorCode;
  }): void;
  /** A call had to wait for its token (none at hand); `ok`: it got one in time. */
  tokenWaited?(event: { clientId: string; ms: number; ok: boolean }): void;
  keyFetched?(event: { outcome: KeyFetchOutcome }): void;
  circuitChanged?(event: { downstream: string; state: CircuitState; previous: CircuitState }): void;
  /** A call refused at once because the downstream's circuit is open. */
  circuitRejected?(event: { downstream: string }): void;
  downstreamRetried?(event: { downstream: string; reason: RetryReason }): void;
}
