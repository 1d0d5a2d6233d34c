import { addCredentialHeaders, type OutgoingTrace } from './call-headers';
import type { ClientEvents } from './client-events';
import type { Downstream, DownstreamAnswer } from './downstream';
import type { TokenSource } from './token-source';

export interface DownstreamCallerOptions {
  downstream: Downstream;
  /** The service's own token for this downstream; none: no credentials are added. */
  tokens?: TokenSource;
  events?: ClientEvents;
}

/** One call: what the caller of our service sent that goes on, and the path. */
export interface CallRequest {
  path?: string;
  /** The caller's `Authorization`, passed on unchanged. */
  callerAuthorization?: string;
  /** Other headers: correlation and traceability ids, trace context, pass-through claims. */
  headers?: Record<string, string>;
  /** The request the call is made for: token requests on its behalf carry its trace. */
  trace?: OutgoingTrace;
}

/** Codes of ours that say the token in `Authorization` / `X-Scope-Token` was refused. */
const AUTHORIZATION_REFUSED = new Set(['ERR10000', 'ERR10001']);
const SCOPE_TOKEN_REFUSED = new Set(['ERR10003', 'ERR10004']);
/**
 * Codes of ours for a refused binding: a token without its certificate or key
 * (TOKEN_BINDING_MISMATCH) or a proof that is not right (INVALID_DPOP_PROOF). A renewed token
 * or a new proof is made the same way and would be refused the same way: no retry (a retry per
 * call would be a token request per call).
 */
const BINDING_REFUSED = new Set(['ERR20012', 'ERR20013']);
/** DPOP_PROOF_REPLAYED: a proof seen before (sent twice on the way); a new proof mends it. */
const PROOF_REPLAYED = 'ERR20014';

/** What a 401 of the downstream calls for: a renewed token, a new proof, or nothing. */
type Remedy = 'renew' | 'new_proof' | 'none';

/**
 * A downstream called with the service's credentials, light-4j's chain: the caller's
 * `Authorization` unchanged and the own token as `X-Scope-Token: Bearer …` (the own token in
 * `Authorization` when the caller sent none). A DPoP-bound own token (`TokenSource.dpop`) goes
 * with a new proof for each call (`htm` GET, `htu` the call's URL, `ath` the token's hash):
 * `Authorization: DPoP …` and `DPoP`, or as X-Scope-Token (`addCredentialHeaders`).
 *
 * A downstream that answers 401 because it refused **our own** token (revoked, or signed with a
 * key the token server no longer has after a restart) gets one more call with a freshly renewed
 * token; a second refusal is the error. Ours means: our token in `Authorization` and a 401 with
 * our ERR10000/ERR10001 or an RFC 6750 `error="invalid_token"` challenge; or our token in
 * `X-Scope-Token` and a 401 with our ERR10003/ERR10004. A refusal of the caller's token is
 * passed on as it is: a new token of ours cannot mend it.
 *
 * A refused binding (ERR20012, ERR20013, a DPoP challenge `error="invalid_dpop_proof"`) is the
 * error at once, never a renewal; a replayed proof (ERR20014) gets one more call with the same
 * token and a new proof.
 */
export class DownstreamCaller {
  constructor(readonly options: DownstreamCallerOptions) {}

  get name(): string {
    return this.options.downstream.options.name;
  }

  /** A JSON GET: the 2xx answer, or the catalogue StatusError the caller of our service gets. */
  async getJson(request: CallRequest = {}): Promise<{ status: number; body: unknown }> {
    const { downstream, tokens, events } = this.options;
    const { path, trace, callerAuthorization } = request;
    if (!tokens) return downstream.getJson({ ...request.headers }, path);
    let own = await tokens.get(trace);
    const first = this.headers(request, own);
    // Awaited only when it is a promise (a DPoP proof): a Bearer call costs no promise more.
    let answer = await downstream.send(first instanceof Promise ? await first : first, {
      path,
      resendHeaders: this.resendHeaders(request, own),
    });
    if (answer.status === 401) {
      const remedy = remedyOf(answer, callerAuthorization !== undefined, tokens.dpop !== undefined);
      if (remedy === 'renew') {
        tokens.invalidate(own);
        events?.downstreamRetried?.({ downstream: this.name, reason: 'invalid_token' });
        own = await tokens.get(trace);
      } else if (remedy === 'new_proof') {
        events?.downstreamRetried?.({ downstream: this.name, reason: 'dpop_proof_replayed' });
      }
      if (remedy !== 'none') {
        answer = await downstream.send(await this.headers(request, own), {
          path,
          resendHeaders: this.resendHeaders(request, own),
        });
      }
    }
    return downstream.check(answer, path);
  }

  /**
   * The call's headers and the credentials, in a new object filled by assignment; a new DPoP
   * proof when the token is bound to a key (a promise only then).
   */
  private headers(
    request: CallRequest,
    own: string,
  ): Record<string, string> | Promise<Record<string, string>> {
    const dpop = this.options.tokens?.dpop;
    if (!dpop) return this.filled(request, own);
    const url = this.options.downstream.urlOf(request.path);
    return dpop.proof('GET', url, own).then((proof) => this.filled(request, own, proof));
  }

  /** A proof is sent once: a resend of the call on a fresh connection gets a new one. */
  private resendHeaders(request: CallRequest, own: string) {
    return this.options.tokens?.dpop ? () => this.headers(request, own) : undefined;
  }

  private filled(request: CallRequest, own: string, proof?: string): Record<string, string> {
    const headers: Record<string, string> = {};
    const given = request.headers;
    if (given) for (const name in given) headers[name] = given[name];
    return addCredentialHeaders(headers, request.callerAuthorization, own, proof);
  }
}

function remedyOf(answer: DownstreamAnswer, ownInScopeToken: boolean, dpop: boolean): Remedy {
  const code = (answer.body as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (BINDING_REFUSED.has(code)) return 'none';
    if (code === PROOF_REPLAYED) return dpop ? 'new_proof' : 'none';
    if (AUTHORIZATION_REFUSED.has(code) || SCOPE_TOKEN_REFUSED.has(code)) {
      const ours = ownInScopeToken
        ? SCOPE_TOKEN_REFUSED.has(code)
        : AUTHORIZATION_REFUSED.has(code);
      return ours ? 'renew' : 'none';
    }
  }
  if (ownInScopeToken) return 'none';
  const challenge = answer.headers['www-authenticate'];
  if (typeof challenge !== 'string') return 'none';
  // RFC 9449 7.1: a DPoP challenge may name the proof, which a renewed token does not mend.
  if (/\berror\s*=\s*"?invalid_dpop_proof"?/i.test(challenge)) return 'none';
  return /\berror\s*=\s*"?invalid_token"?/i.test(challenge) ? 'renew' : 'none';
}
