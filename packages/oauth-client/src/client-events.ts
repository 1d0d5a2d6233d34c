import type { CircuitState } from './circuit-breaker';
import type { TokenFetchErrorCode } from './token-fetch-error';

/** What made a token be fetched: none yet, inside the renewal window, expired, refused downstream. */
export type RenewalTrigger = 'cold' | 'early' | 'expired' | 'invalid_token';

/** What one look-up at the key distribution server gave. */
export type KeyFetchOutcome = 'key' | 'key_set' | 'no_such_kid' | 'failed';

/** Why a downstream call was sent a second time. */
export type RetryReason = 'stale_connection' | 'invalid_token' | 'dpop_proof_replayed';

/**
 * What the client side reports, for metrics (`@chain/metrics` implements it) and logs. Every
 * method is optional; none is called on the hot path of a call that needs nothing (a token at
 * hand, a closed circuit, one attempt).
 */
export interface ClientEvents {
  /** A token was obtained from the token server. */
  tokenRenewed?(event: { clientId: string; trigger: RenewalTrigger; ms: number }): void;
  /** A token request failed. */
  tokenRenewalFailed?(event: {
    clientId: string;
    trigger: RenewalTrigger;
    cause: TokenFetchErrorCode;
  }): void;
  /** A call had to wait for its token (none at hand); `ok`: it got one in time. */
  tokenWaited?(event: { clientId: string; ms: number; ok: boolean }): void;
  /** One look-up at the key distribution server. */
  keyFetched?(event: { outcome: KeyFetchOutcome }): void;
  /** A downstream's circuit changed state. */
  circuitChanged?(event: { downstream: string; state: CircuitState; previous: CircuitState }): void;
  /** A call refused at once because the downstream's circuit is open. */
  circuitRejected?(event: { downstream: string }): void;
  /** A downstream call sent a second time. */
  downstreamRetried?(event: { downstream: string; reason: RetryReason }): void;
}
