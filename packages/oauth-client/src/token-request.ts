import type { GrantSettings } from './client-config.js';
import type { DpopKey } from './dpop-key.js';
import { TokenFetchError } from './token-fetch-error.js';
import { jsonObject, type Transport, type TransportError } from './transport.js';

export interface AccessToken {
  value: string;
  /** Epoch ms. */
  expiresAt: number;
  scope?: string[];
  refreshToken?: string;
}

export interface TokenEndpoint extends Omit<GrantSettings, 'authMethod'> {
  authMethod?: GrantSettings['authMethod'];
  dpop?: DpopKey;
  timeoutMs: number;
  http: Transport;
  now?: () => number;
}

export type Grant =
  | { grant_type: 'client_credentials'; scope?: readonly string[] }
  | {
      grant_type: 'authorization_code';
      code: string;
      redirect_uri?: string;
      code_verifier?: string;
      scope?: readonly string[];
    }
  | { grant_type: 'refresh_token'; refresh_token: string; scope?: readonly string[] };

const MAX_ANSWER = 64 * 1024;

/** `Basic base64(id:secret)`, each form-encoded first (RFC 6749 2.3.1). */
export function basicAuth(id: string, secret: string): string {
  const pair = `${encodeURIComponent(id)}:${encodeURIComponent(secret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/**
 * A token request: Basic client auth, or `client_id` in the form (RFC 8705 `tls_client_auth`);
 * when bound, a DPoP proof, once more with the server's nonce when it asks (RFC 9449 8).
 */
export class TokenRequester {
  readonly url: string;
  private readonly target: URL;

  constructor(private readonly endpoint: TokenEndpoint) {
    this.url = endpoint.serverUrl.replace(/\/+$/, '') + endpoint.uri;
    this.target = new URL(this.url);
  }

  get clientId(): string {
    return this.endpoint.clientId;
  }

  async request(grant: Grant, headers?: Record<string, string>): Promise<AccessToken> {
    const { clientId, dpop } = this.endpoint;
    const now = this.endpoint.now ?? Date.now;
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(grant)) {
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      form.set(key, Array.isArray(value) ? value.join(' ') : String(value));
    }
    const sent: Record<string, string> = {
      ...headers,
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    };
    if (this.endpoint.authMethod === 'tls_client_auth') form.set('client_id', clientId);
    else sent.Authorization = basicAuth(clientId, this.endpoint.clientSecret ?? '');
    const startedAt = now();
    let response = await this.send(sent, form);
    let body = jsonObject(response.body);
    const nonce = response.headers['dpop-nonce'];
    if (
      dpop &&
      response.status === 400 &&
      body?.error === 'use_dpop_nonce' &&
      typeof nonce === 'string'
    ) {
      response = await this.send(sent, form, nonce);
      body = jsonObject(response.body);
    }
    const details = { clientId, url: this.url, status: response.status };
    if (response.status < 200 || response.status > 299) {
      const oauthError = typeof body?.error === 'string' ? body.error : undefined;
      // The server's own error answer: it knows no secret.
      const cause = {
        status: response.status,
        error: oauthError,
        description: body?.error_description,
      };
      const code =
        response.status === 401
          ? 'unauthorized'
          : oauthError === 'invalid_grant'
            ? 'invalid_grant'
            : 'rejected';
      throw new TokenFetchError(code, { ...details, oauthError, cause });
    }
    const bad = (why: string) =>
      new TokenFetchError('bad_response', { ...details, cause: new Error(why) });
    const token = body?.access_token;
    if (typeof token !== 'string' || token === '') throw bad('no access_token');
    // Counted from when the request was sent: the token is never kept past its real end.
    const lifetimeMs = lifetimeOf(body?.expires_in);
    if (lifetimeMs === undefined) throw bad('no expires_in');
    if (dpop && String(body?.token_type).toLowerCase() !== 'dpop') {
      // RFC 9449 5: a token not bound to the key is never used as one.
      throw bad(`token_type ${String(body?.token_type)}, not DPoP: the token is not bound`);
    }
    const refreshToken = body?.refresh_token;
    return {
      value: token,
      expiresAt: startedAt + lifetimeMs,
      scope: typeof body?.scope === 'string' ? body.scope.split(/\s+/).filter(Boolean) : undefined,
      ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
    };
  }

  private async send(headers: Record<string, string>, form: URLSearchParams, nonce?: string) {
    const { clientId, dpop } = this.endpoint;
    const sent = dpop
      ? { ...headers, DPoP: await dpop.proof('POST', this.target, undefined, nonce) }
      : headers;
    try {
      return await this.endpoint.http.request({
        method: 'POST',
        url: this.target,
        headers: sent,
        body: form.toString(),
        timeoutMs: this.endpoint.timeoutMs,
        maxBodyBytes: MAX_ANSWER,
      });
    } catch (err) {
      const kind = (err as TransportError).kind;
      const code =
        kind === 'timeout' ? 'timeout' : kind === 'body_too_large' ? 'bad_response' : 'unreachable';
      throw new TokenFetchError(code, { clientId, url: this.url, cause: err });
    }
  }
}

/** `expires_in` (light-oauth2 and oidc-provider always send it) in ms. */
function lifetimeOf(expiresIn: unknown): number | undefined {
  const seconds = typeof expiresIn === 'string' ? Number(expiresIn) : expiresIn;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0
    ? seconds * 1000
    : undefined;
}
