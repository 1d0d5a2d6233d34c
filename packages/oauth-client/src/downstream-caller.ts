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
 * A downstream called with the service's credentials, light-4j's chain: the caller's
 * `Authorization` unchanged and the own token as `X-Scope-Token: Bearer …` (the own token in
 * `Authorization` when the caller sent none).
 *
 * A downstream that answers 401 because it refused **our own** token (revoked, or signed with a
 * key the token server no longer has after a restart) gets one more call with a freshly renewed
 * token; a second refusal is the error. Ours means: our token in `Authorization` and a 401 with
 * our ERR10000/ERR10001 or an RFC 6750 `error="invalid_token"` challenge; or our token in
 * `X-Scope-Token` and a 401 with our ERR10003/ERR10004. A refusal of the caller's token is
 * passed on as it is: a new token of ours cannot mend it.
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
    let answer = await downstream.send(this.headers(request, own), { path });
    if (answer.status === 401 && refusedOwnToken(answer, callerAuthorization !== undefined)) {
      tokens.invalidate(own);
      events?.downstreamRetried?.({ downstream: this.name, reason: 'invalid_token' });
      own = await tokens.get(trace);
      answer = await downstream.send(this.headers(request, own), { path });
    }
    return downstream.check(answer, path);
  }

  /** The call's headers and the credentials, in a new object filled by assignment. */
  private headers(request: CallRequest, own: string): Record<string, string> {
    const headers: Record<string, string> = {};
    const given = request.headers;
    if (given) for (const name in given) headers[name] = given[name];
    return addCredentialHeaders(headers, request.callerAuthorization, own);
  }
}

function refusedOwnToken(answer: DownstreamAnswer, ownInScopeToken: boolean): boolean {
  const code = (answer.body as { code?: unknown } | null)?.code;
  if (
    typeof code === 'string' &&
    (AUTHORIZATION_REFUSED.has(code) || SCOPE_TOKEN_REFUSED.has(code))
  ) {
    return ownInScopeToken ? SCOPE_TOKEN_REFUSED.has(code) : AUTHORIZATION_REFUSED.has(code);
  }
  if (ownInScopeToken) return false;
  const challenge = answer.headers['www-authenticate'];
  return typeof challenge === 'string' && /\berror\s*=\s*"?invalid_token"?/i.test(challenge);
}
