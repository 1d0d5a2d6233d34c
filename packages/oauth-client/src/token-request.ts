import * as oauth from 'oauth4webapi';
import type { GrantSettings } from './client-config.js';
import type { DpopKey } from './dpop-key.js';
import { TokenFetchError } from './token-fetch-error.js';
import { fetchOver, type Transport, type TransportError } from '@chain/http';

export interface AccessToken {
  value: string;
  /** Epoch ms. */
  expiresAt: number;
  scope?: string[];
  refreshToken?: string;
}

export interface TokenEndpoint extends GrantSettings {
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
  | { grant_type: 'refresh_token'; refresh_token: string; scope?: readonly string[] }
  | {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange';
      subject_token: string;
      subject_token_type: string;
      audience: string;
      scope?: readonly string[];
    };

const MAX_ANSWER = 64 * 1024;

/** `Basic base64(id:secret)`, each form-encoded first (RFC 6749 2.3.1). */
export function basicAuth(id: string, secret: string): string {
  const pair = `${encodeURIComponent(id)}:${encodeURIComponent(secret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/** A token request by oauth4webapi over the service's transport (README, "Token requests"). */
export class TokenRequester {
  readonly url: string;
  readonly clientId: string;
  private readonly server: oauth.AuthorizationServer;
  private readonly client: oauth.Client;
  private readonly auth: oauth.ClientAuth;
  private readonly options: oauth.TokenEndpointRequestOptions;

  constructor(private readonly endpoint: TokenEndpoint) {
    const { serverUrl, clientId, clientSecret = '', dpop, http, timeoutMs } = endpoint;
    this.url = serverUrl.replace(/\/+$/, '') + endpoint.uri;
    // Only its token endpoint is used: no metadata, no ID token.
    this.server = { issuer: serverUrl, token_endpoint: this.url };
    this.clientId = clientId;
    this.client = { client_id: clientId };
    this.auth =
      endpoint.authMethod === 'tls_client_auth'
        ? oauth.TlsClientAuth()
        : (_as, _client, _form, headers) =>
            headers.set('authorization', basicAuth(clientId, clientSecret));
    this.options = {
      DPoP: dpop?.handle,
      [oauth.customFetch]: fetchOver(http, timeoutMs, MAX_ANSWER),
      [oauth.allowInsecureRequests]: true,
    };
  }

  /** The key its tokens are bound to (DPoP). */
  get dpop(): DpopKey | undefined {
    return this.endpoint.dpop;
  }

  async request(grant: Grant, headers?: Record<string, string>): Promise<AccessToken> {
    const { server, client, auth, endpoint } = this;
    const { dpop, now = Date.now } = endpoint;
    // grant_type first: oauth4webapi sets it where it is.
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(grant)) {
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      form.set(key, Array.isArray(value) ? value.join(' ') : String(value));
    }
    const startedAt = now();
    let answer: Response | undefined;
    const exchange = async () => {
      answer = undefined;
      const options = { ...this.options, headers };
      const type = grant.grant_type;
      answer = await oauth.genericTokenEndpointRequest(server, client, auth, type, form, options);
      return oauth.processGenericTokenEndpointResponse(server, client, answer);
    };
    const token = await exchange()
      // The DPoP handle keeps the server's nonce for the next proof.
      .catch((err: unknown) =>
        dpop && oauth.isDPoPNonceError(err) && answer?.headers.has('dpop-nonce')
          ? exchange()
          : Promise.reject(err),
      )
      .catch((err: unknown) => {
        throw this.failure(err, answer?.status);
      });
    const lifetime = token.expires_in ?? 0;
    if (lifetime <= 0) throw this.failure(new Error('no expires_in'), 200);
    if (dpop && token.token_type !== 'dpop') {
      const why = `token_type ${token.token_type}, not DPoP: the token is not bound`;
      throw this.failure(new Error(why), 200);
    }
    const { access_token: value, refresh_token: refreshToken, scope } = token;
    return {
      value,
      expiresAt: startedAt + lifetime * 1000,
      scope: scope?.split(/\s+/).filter(Boolean),
      ...(refreshToken ? { refreshToken } : {}),
    };
  }

  /** With the transport's failure or the server's error answer as its cause: no secret. */
  private failure(err: unknown, status: number | undefined): TokenFetchError {
    const details = { clientId: this.clientId, url: this.url, status };
    if (status === undefined) {
      const { code: why } = err as TransportError;
      const code =
        why === 'timeout' ? 'timeout' : why === 'body_too_large' ? 'bad_response' : 'unreachable';
      return new TokenFetchError(code, { ...details, cause: err });
    }
    if (status === 200) {
      const cause = new Error((err as Error).message);
      return new TokenFetchError('bad_response', { ...details, cause });
    }
    const challenge = err instanceof oauth.WWWAuthenticateChallengeError && err.cause[0].parameters;
    const said = challenge || (err instanceof oauth.ResponseBodyError ? err : {});
    const oauthError = said.error;
    const cause = { status, error: oauthError, description: said.error_description };
    const code =
      status === 401 ? 'unauthorized' : oauthError === 'invalid_grant' ? oauthError : 'rejected';
    return new TokenFetchError(code, { ...details, oauthError, cause });
  }
}
