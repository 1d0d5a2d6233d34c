import type https from 'node:https';
import { StatusError } from '@chain/security';
import { clientSecrets, type ClientConfig, type SecretConfig } from './client-config';
import { RenewableToken } from './renewable-token';
import { TokenRequester, type AccessToken } from './token-request';

export interface TokenManagerOptions {
  client: ClientConfig;
  secret: SecretConfig;
  httpsAgent?: https.Agent;
  now?: () => number;
  /** Told about a failed background renewal. */
  onBackgroundError?: (err: unknown) => void;
}

/**
 * The tokens of one service, from client.yml and secret.yml: client-credentials tokens cached
 * and renewed per scope set, and the authorization code exchange. Misconfiguration (no
 * server_url, no client_id, no secret) throws a TypeError naming the key when built.
 */
export class TokenManager {
  private readonly tokens = new Map<string, RenewableToken>();
  private defaultToken: RenewableToken | undefined;
  private readonly clientCredentialsRequester?: TokenRequester;
  private readonly authorizationCodeRequester?: TokenRequester;

  constructor(private readonly options: TokenManagerOptions) {
    const { token } = options.client.oauth;
    const secrets = clientSecrets(options.client, options.secret);
    const timeoutMs = options.client.request.timeout;
    const requester = (
      grant: 'client_credentials' | 'authorization_code',
      secret: string | undefined,
      secretKey: string,
    ) => {
      const cfg = token[grant];
      if (!cfg) return undefined;
      if (!token.server_url) throw new TypeError('client.yml oauth.token.server_url is required');
      if (!secret) throw new TypeError(`secret.yml ${secretKey} is required for ${cfg.client_id}`);
      return new TokenRequester({
        serverUrl: token.server_url,
        uri: cfg.uri,
        clientId: cfg.client_id,
        clientSecret: secret,
        timeoutMs,
        httpsAgent: options.httpsAgent,
        now: options.now,
      });
    };
    this.clientCredentialsRequester = requester(
      'client_credentials',
      secrets.clientCredentialsClientSecret,
      'clientCredentialsClientSecret',
    );
    this.authorizationCodeRequester = requester(
      'authorization_code',
      secrets.authorizationCodeClientSecret,
      'authorizationCodeClientSecret',
    );
  }

  /** Whether client.yml has a client_credentials grant. */
  get hasClientCredentials(): boolean {
    return this.clientCredentialsRequester !== undefined;
  }

  /**
   * The service's own client-credentials token for a scope set (client.yml's scope when
   * omitted), kept, or from one shared renewal. Throws TokenFetchError.
   */
  clientCredentials(scope?: readonly string[]): Promise<AccessToken> {
    return this.tokenFor(scope).get();
  }

  /** The token of one scope set; the default set's is kept at hand for the hot path. */
  private tokenFor(scope: readonly string[] | undefined): RenewableToken {
    if (scope === undefined && this.defaultToken) return this.defaultToken;
    const requester = this.clientCredentialsRequester;
    if (!requester) throw new TypeError('client.yml oauth.token.client_credentials is required');
    const cfg = this.options.client.oauth.token;
    const wanted = scope ?? cfg.client_credentials?.scope ?? [];
    const key = [...new Set(wanted)].sort().join(' ');
    let token = this.tokens.get(key);
    if (!token) {
      token = new RenewableToken({
        clientId: cfg.client_credentials!.client_id,
        tokenRenewBeforeExpired: cfg.tokenRenewBeforeExpired,
        expiredRefreshRetryDelay: cfg.expiredRefreshRetryDelay,
        earlyRefreshRetryDelay: cfg.earlyRefreshRetryDelay,
        now: this.options.now,
        onBackgroundError: this.options.onBackgroundError,
        fetch: () =>
          requester.request({ grant_type: 'client_credentials', scope: key ? key.split(' ') : [] }),
      });
      this.tokens.set(key, token);
    }
    if (scope === undefined) this.defaultToken = token;
    return token;
  }

  /** The renewal in flight of a scope set's token, if any (it settles when the renewal does). */
  renewal(scope?: readonly string[]): Promise<AccessToken> | undefined {
    return this.tokenFor(scope).renewal;
  }

  /**
   * The client-credentials token for a downstream call, or ERR10009 (408) when it cannot be
   * had within `timeoutMs`; the StatusError keeps the TokenFetchError as its cause.
   */
  async clientCredentialsWithin(timeoutMs: number, scope?: readonly string[]): Promise<string> {
    let token: RenewableToken;
    try {
      token = this.tokenFor(scope);
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    }
    // A token at hand (the usual case) needs no timer and no race.
    const ready = token.peek();
    if (ready) return ready.value;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no token within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return (await Promise.race([token.get(), timeout])).value;
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The authorization code exchange: a user's code turned into a token (not cached: every
   * code is used once). Scope omitted means client.yml's, else the client's registered default.
   */
  authorizationCode(code: string, redirectUri?: string): Promise<AccessToken> {
    const requester = this.authorizationCodeRequester;
    if (!requester) throw new TypeError('client.yml oauth.token.authorization_code is required');
    const cfg = this.options.client.oauth.token.authorization_code!;
    return requester.request({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri ?? cfg.redirect_uri,
      scope: cfg.scope,
    });
  }
}
