import { credentialHeaders, type OutgoingTrace } from './call-headers.js';
import type { ClientEvents } from './client-events.js';
import type { Downstream, DownstreamAnswer } from './downstream.js';
import type { TokenSource } from './renewable-token.js';

export interface CallRequest {
  path?: string;
  callerAuthorization?: string;
  /** Correlation and traceability ids, trace context, pass-through claims. */
  headers?: Record<string, string>;
  trace?: OutgoingTrace;
}

/** Codes of ours that say the token in `Authorization` / `X-Scope-Token` was refused. */
const AUTHORIZATION_REFUSED = new Set(['ERR10000', 'ERR10001']);
const SCOPE_TOKEN_REFUSED = new Set(['ERR10003', 'ERR10004']);
/** TOKEN_BINDING_MISMATCH, INVALID_DPOP_PROOF: a retry would be refused the same way. */
const BINDING_REFUSED = new Set(['ERR20012', 'ERR20013']);
/** DPOP_PROOF_REPLAYED (sent twice on the way): a new proof mends it. */
const PROOF_REPLAYED = 'ERR20014';

/** One more call when a 401 refused our own token or a replayed proof (README). */
export class DownstreamCaller {
  constructor(
    readonly options: { downstream: Downstream; tokens?: TokenSource; events?: ClientEvents },
  ) {}

  async getJson(request: CallRequest = {}): Promise<{ status: number; body: unknown }> {
    const { downstream, tokens, events } = this.options;
    const { path, trace, callerAuthorization } = request;
    if (!tokens) return downstream.getJson({ ...request.headers }, path);
    let own = await tokens.get(trace);
    const first = this.headers(request, own);
    // Awaited only when it is a promise (a DPoP proof): a Bearer call costs no promise more.
    let answer = await this.send(request, own, first instanceof Promise ? await first : first);
    if (answer.response.status === 401) {
      const { name } = downstream.options;
      const reason = retryOf(answer, callerAuthorization !== undefined, tokens.dpop !== undefined);
      if (reason === 'invalid_token') tokens.invalidate(own);
      if (reason) {
        events?.downstreamRetried?.({ downstream: name, reason });
        if (reason === 'invalid_token') own = await tokens.get(trace);
        answer = await this.send(request, own, await this.headers(request, own));
      }
    }
    return downstream.check(answer, path);
  }

  private headers(request: CallRequest, own: string) {
    const dpop = this.options.tokens?.dpop;
    if (!dpop) return this.filled(request, own);
    const url = this.options.downstream.urlOf(request.path);
    return dpop.proof('GET', url, own).then((proof) => this.filled(request, own, proof));
  }

  private send(request: CallRequest, own: string, headers: Record<string, string>) {
    const resendHeaders = this.options.tokens?.dpop ? () => this.headers(request, own) : undefined;
    return this.options.downstream.send(headers, { path: request.path, resendHeaders });
  }

  private filled(request: CallRequest, own: string, proof?: string): Record<string, string> {
    const headers: Record<string, string> = {};
    const given = request.headers;
    if (given) for (const name in given) headers[name] = given[name];
    return credentialHeaders(request.callerAuthorization, own, proof, headers);
  }
}

type Retry = 'invalid_token' | 'dpop_proof_replayed' | undefined;

function retryOf(answer: DownstreamAnswer, ownInScopeToken: boolean, dpop: boolean): Retry {
  const code = (answer.body as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (BINDING_REFUSED.has(code)) return undefined;
    if (code === PROOF_REPLAYED) return dpop ? 'dpop_proof_replayed' : undefined;
    if (AUTHORIZATION_REFUSED.has(code) || SCOPE_TOKEN_REFUSED.has(code)) {
      const ours = ownInScopeToken
        ? SCOPE_TOKEN_REFUSED.has(code)
        : AUTHORIZATION_REFUSED.has(code);
      return ours ? 'invalid_token' : undefined;
    }
  }
  if (ownInScopeToken) return undefined;
  const challenge = answer.response.headers['www-authenticate'];
  if (typeof challenge !== 'string') return undefined;
  // RFC 9449 7.1: a DPoP challenge may name the proof, which a renewed token does not mend.
  if (/\berror\s*=\s*"?invalid_dpop_proof"?/i.test(challenge)) return undefined;
  return /\berror\s*=\s*"?invalid_token"?/i.test(challenge) ? 'invalid_token' : undefined;
}
