import type https from 'node:https';
import axios, { isAxiosError, type AxiosInstance } from 'axios';
import { TokenFetchError } from './token-fetch-error';

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
  clientSecret: string;
  timeoutMs: number;
  httpsAgent?: https.Agent;
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

/**
 * One request to the token endpoint in the light-oauth2 protocol: a form POST with
 * `Authorization: Basic base64(client_id:client_secret)`. Every failure is a TokenFetchError whose
 * cause is the network error or the server's error answer, never the request itself.
 */
export class TokenRequester {
  private readonly http: AxiosInstance;
  readonly url: string;

  constructor(private readonly endpoint: TokenEndpoint) {
    this.url = endpoint.serverUrl.replace(/\/+$/, '') + endpoint.uri;
    this.http = axios.create({
      timeout: endpoint.timeoutMs,
      httpsAgent: endpoint.httpsAgent,
      validateStatus: () => true,
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      maxRedirects: 0,
      proxy: false,
    });
  }

  /** The client the requests authenticate as. */
  get clientId(): string {
    return this.endpoint.clientId;
  }

  /** One token request; `headers` are added (the W3C trace context of the request it is for). */
  async request(grant: Grant, headers?: Record<string, string>): Promise<AccessToken> {
    const { clientId, clientSecret } = this.endpoint;
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
    // RFC 6749 2.3.1: id and secret are form-encoded before base64.
    const basic = Buffer.from(
      `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`,
    ).toString('base64');
    const startedAt = now();
    let response;
    try {
      response = await this.http.post<string>(this.url, form.toString(), {
        headers: {
          ...headers,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: `Basic ${basic}`,
        },
      });
    } catch (err) {
      throw networkError(err, clientId, this.url);
    }
    const body = parseJson(response.data);
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
    const lifetimeMs = lifetimeOf(body?.expires_in, token, startedAt);
    if (lifetimeMs === undefined) {
      throw new TokenFetchError('bad_response', {
        ...details,
        cause: new Error('no expires_in or exp'),
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
}

type Json = Record<string, unknown>;

function parseJson(text: unknown): Json | undefined {
  if (typeof text !== 'string') return undefined;
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
 * `expires_in` seconds, counted from when the request was sent (so the token is never kept
 * past its real end); else the JWT's own `exp`.
 */
function lifetimeOf(expiresIn: unknown, jwt: string, startedAt: number): number | undefined {
  const seconds = typeof expiresIn === 'string' ? Number(expiresIn) : expiresIn;
  if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  const payload = parseJson(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
  const exp = payload?.exp;
  if (typeof exp === 'number' && Number.isFinite(exp) && exp * 1000 > startedAt) {
    return exp * 1000 - startedAt;
  }
  return undefined;
}

/** A network failure as a TokenFetchError whose cause is the bare Node error, not axios's request. */
function networkError(err: unknown, clientId: string, url: string): TokenFetchError {
  if (!isAxiosError(err)) return new TokenFetchError('unreachable', { clientId, url, cause: err });
  const timedOut = err.code === 'ECONNABORTED' || err.code === 'ETIMEDOUT';
  // axios errors hold the request config, headers included (the Basic credential): drop them.
  const cause = err.cause ?? Object.assign(new Error(err.message), { code: err.code });
  return new TokenFetchError(timedOut ? 'timeout' : 'unreachable', { clientId, url, cause });
}
