import type { CircuitState } from './circuit-breaker.js';
import type { TokenFetchErrorCode } from './token-fetch-error.js';

/** What made a token be fetched (`invalid_token`: refused downstream). */
export type RenewalTrigger = 'cold' | 'early' | 'expired' | 'invalid_token';

export type KeyFetchOutcome = 'key' | 'key_set' | 'no_such_kid' | 'failed';

export type RetryReason = 'stale_connection' | 'invalid_token' | 'dpop_proof_replayed';

/** None is called on the hot path of a call that needs nothing (a token at hand, one attempt). */
export interface ClientEvents {
  tokenRenewed?(event: { clientId: string; trigger: RenewalTrigger; ms: number }): void;
  tokenRenewalFailed?(event: {
    clientId: string;
    trigger: RenewalTrigger;
    cause: TokenFetchErrorCode;
  }): void;
  tokenWaited?(event: { clientId: string; ms: number; ok: boolean }): void;
  keyFetched?(event: { outcome: KeyFetchOutcome }): void;
  circuitChanged?(event: { downstream: string; state: CircuitState; previous: CircuitState }): void;
  circuitRejected?(event: { downstream: string }): void;
  downstreamRetried?(event: { downstream: string; reason: RetryReason }): void;
}
