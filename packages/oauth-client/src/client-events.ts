import type { DownstreamEvents } from '@chain/http';
import type { TokenFetchErrorCode } from './token-fetch-error.js';

/** What made a token be fetched (`invalid_token`: refused downstream). */
export type RenewalTrigger = 'cold' | 'early' | 'expired' | 'invalid_token';

export type KeyFetchOutcome = 'key' | 'key_set' | 'no_such_kid' | 'failed';

/** None is called on the hot path of a call that needs nothing (a token at hand, one attempt). */
export interface ClientEvents extends DownstreamEvents {
  tokenRenewed?(event: { clientId: string; trigger: RenewalTrigger; ms: number }): void;
  tokenRenewalFailed?(event: {
    clientId: string;
    trigger: RenewalTrigger;
    cause: TokenFetchErrorCode;
  }): void;
  tokenWaited?(event: { clientId: string; ms: number; ok: boolean }): void;
  keyFetched?(event: { outcome: KeyFetchOutcome }): void;
}
