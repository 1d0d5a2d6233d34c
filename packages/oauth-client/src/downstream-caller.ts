import { isStatusCode, STATUS } from '@chain/errors';
import { credentialHeaders, type OutgoingTrace } from './call-headers.js';
import type { ClientEvents } from './client-events.js';
import type { Downstream, DownstreamAnswer } from '@chain/http';
import type { TokenSource } from './renewable-token.js';

export interface CallRequest {
  path?: string;
  callerAuthorization?: string;
  /** Correlation and traceability ids, trace context, pass-through claims. */
  headers?: Record<string, string>;
  trace?: OutgoingTrace;
}

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
  const refused = isStatusCode(code) ? STATUS[code].refuses : undefined;
  if (refused?.token === 'either') {
    // A replayed proof (sent twice on the way) is mended by a new one; a binding mismatch or
    // an invalid proof would be refused the same way again.
    return refused.reasons.includes('replayed') && dpop ? 'dpop_proof_replayed' : undefined;
  }
  if (refused) {
    return refused.token === (ownInScopeToken ? 'scope' : 'auth') ? 'invalid_token' : undefined;
  }
  if (ownInScopeToken) return undefined;
  const challenge = answer.response.headers['www-authenticate'];
  if (typeof challenge !== 'string') return undefined;
  // RFC 9449 7.1: a DPoP challenge may name the proof, which a renewed token does not mend.
  if (/\berror\s*=\s*"?invalid_dpop_proof"?/i.test(challenge)) return undefined;
  return /\berror\s*=\s*"?invalid_token"?/i.test(challenge) ? 'invalid_token' : undefined;
}
