import type { ClientAuthMethod } from './client-config';
import type { DpopKey } from './dpop-key';
import { TokenFetchError } from './token-fetch-error';
import type { Transport, TransportError, TransportResponse } from './transport';

/** A token as the cache keeps it. */
export interface AccessToken {
  /** The JWT. */
  value: string;
  /** Epoch milliseconds at which the token expires. */
  expiresAt: number;
  /** Granted scopes, when the token server said. */
  scope?: string[];
  /** The refresh token issued with it (authorization code and refresh grants). */
  refreshToken?: string;
}

export interface TokenEndpoint {
  /** e.g. `https://oauth2-token:6882` */
  serverUrl: string;
  /** e.g. `/oauth2/token` */
  uri: string;
  clientId: string;
  /**
   * `client_secret_basic` (default): `Authorization: Basic` with `clientSecret`;
   * `tls_client_auth` (RFC 8705): `client_id` in the form, the certificate of the connection
   * (client.yml tls.keyStore) authenticates.
   */
  authMethod?: ClientAuthMethod;
  clientSecret?: string;
  /**
   * RFC 9449: each request carries a new DPoP proof of this key, and the answer must be a
   * DPoP-bound token (`token_type: DPoP`).
   */
  dpop?: DpopKey;
  /** client.yml `request.timeout`: the whole request. */
  timeoutMs: number;
  /** The service's `HttpClient`. */
  http: Transport;
  /** Clock used to turn `expires_in` into `expiresAt`. */
  now?: () => number;
}

export type Grant =
  | { grant_type: 'client_credentials'; scope?: readonly string[] }
  | {
      grant_type: 'authorization_code';
      code: string;
      redirect_uri?: string;
      /** RFC 7636 PKCE: the verifier of the `code_challenge` the code was asked with. */
      code_verifier?: string;
      scope?: readonly string[];
    }
  | { grant_type: 'refresh_token'; refresh_token: string; scope?: readonly string[] };

/** Largest token answer read (a token, a refresh token, a scope list). */
const MAX_ANSWER = 64 * 1024;

/**
 * One request to the token endpoint in the light-oauth2 protocol: a form POST with
 * `Authorization: Basic base64(client_id:client_secret)`, or with RFC 8705 `tls_client_auth` the
 * `client_id` in the form and the connection's certificate; with a DPoP key (RFC 9449) a new
 * proof in a `DPoP` header (`htm` POST, `htu` the token endpoint), once more with the server's
 * nonce when it asks for one (`use_dpop_nonce`). Every failure is a TokenFetchError whose
 * cause is the transport's failure or the server's error answer, never the request itself.
 */
export class TokenRequester {
  readonly url: string;
  private readonly target: URL;

  constructor(private readonly endpoint: TokenEndpoint) {
    this.url = endpoint.serverUrl.replace(/\/+$/, '') + endpoint.uri;
    this.target = new URL(this.url);
  }

  /** The client the requests authenticate as. */
  get clientId(): string {
    return this.endpoint.clientId;
  }

  /** One token request; `headers` are added (the W3C trace context of the request it is for). */
  async request(grant: Grant, headers?: Record<string, string>): Promise<AccessToken> {
    const { clientId, dpop } = this.endpoint;
    const now = this.endpoint.now ?? Date.now;
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(grant)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) {
        if (value.length) form.set(key, value.join(' '));
      } else {
        form.set(key, String(value));
      }
    }
    const sent: Record<string, string> = {
      ...headers,
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    };
    if (this.endpoint.authMethod === 'tls_client_auth') {
      form.set('client_id', clientId);
    } else {
      // RFC 6749 2.3.1: id and secret are form-encoded before base64.
      const secret = encodeURIComponent(this.endpoint.clientSecret ?? '');
      const basic = Buffer.from(`${encodeURIComponent(clientId)}:${secret}`).toString('base64');
      sent.Authorization = `Basic ${basic}`;
    }
    const startedAt = now();
    let response = await this.send(sent, form, dpop);
    let body = parseJson(response.body);
    const nonce = response.headers['dpop-nonce'];
    if (
      dpop &&
      response.status === 400 &&
      body?.error === 'use_dpop_nonce' &&
      typeof nonce === 'string'
    ) {
      // RFC 9449 8: the server wants its nonce in the proof; asked once.
      response = await this.send(sent, form, dpop, nonce);
      body = parseJson(response.body);
    }
    const details = { clientId, url: this.url, status: response.status };
    if (response.status < 200 || response.status > 299) {
      const oauthError = typeof body?.error === 'string' ? body.error : undefined;
      // The cause is the server's own error answer: it knows no secret.
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
    const token = body?.access_token;
    if (typeof token !== 'string' || token === '') {
      throw new TokenFetchError('bad_response', {
        ...details,
        cause: new Error('no access_token'),
      });
    }
    const lifetimeMs = lifetimeOf(body?.expires_in);
    if (lifetimeMs === undefined) {
      throw new TokenFetchError('bad_response', {
        ...details,
        cause: new Error('no expires_in'),
      });
    }
    if (dpop && String(body?.token_type).toLowerCase() !== 'dpop') {
      // RFC 9449 5: a token not bound to the key is not what was configured; never used as one.
      throw new TokenFetchError('bad_response', {
        ...details,
        cause: new Error(
          `token_type ${String(body?.token_type)}, not DPoP: the token is not bound`,
        ),
      });
    }
    const refreshToken = body?.refresh_token;
    return {
      value: token,
      expiresAt: startedAt + lifetimeMs,
      scope: typeof body?.scope === 'string' ? body.scope.split(/\s+/).filter(Boolean) : undefined,
      ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
    };
  }

  /** One POST of the form, with a new DPoP proof when bound; a failure is a TokenFetchError. */
  private async send(
    headers: Record<string, string>,
    form: URLSearchParams,
    dpop: DpopKey | undefined,
    nonce?: string,
  ): Promise<TransportResponse> {
    const { clientId } = this.endpoint;
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
      // The transport's error knows nothing of the request: no header, no secret.
      throw new TokenFetchError(code, { clientId, url: this.url, cause: err });
    }
  }
}

type Json = Record<string, unknown>;

function parseJson(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Json)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `expires_in` seconds (light-oauth2 and oidc-provider always send it), counted from when the
 * request was sent, so the token is never kept past its real end.
 */
function lifetimeOf(expiresIn: unknown): number | undefined {
  const seconds = typeof expiresIn === 'string' ? Number(expiresIn) : expiresIn;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0
    ? seconds * 1000
    : undefined;
}
