import type https from 'node:https';
import { StatusError } from '@chain/security';
import { clientSecrets, type ClientConfig, type SecretConfig } from './client-config';
import { TokenCache } from './token-cache';
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
  private readonly caches = new Map<string, TokenCache>();
  private defaultCache: TokenCache | undefined;
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
   * omitted), from the cache or one shared renewal. Throws TokenError.
   */
  clientCredentials(scope?: readonly string[]): Promise<AccessToken> {
    return this.cacheFor(scope).get();
  }

  /** The cache of one scope set; the default set's cache is kept at hand for the hot path. */
  private cacheFor(scope: readonly string[] | undefined): TokenCache {
    if (scope === undefined && this.defaultCache) return this.defaultCache;
    const requester = this.clientCredentialsRequester;
    if (!requester) throw new TypeError('client.yml oauth.token.client_credentials is required');
    const cfg = this.options.client.oauth.token;
    const wanted = scope ?? cfg.client_credentials?.scope ?? [];
    const key = [...new Set(wanted)].sort().join(' ');
    let cache = this.caches.get(key);
    if (!cache) {
      cache = new TokenCache({
        clientId: cfg.client_credentials!.client_id,
        tokenRenewBeforeExpired: cfg.tokenRenewBeforeExpired,
        expiredRefreshRetryDelay: cfg.expiredRefreshRetryDelay,
        earlyRefreshRetryDelay: cfg.earlyRefreshRetryDelay,
        now: this.options.now,
        onBackgroundError: this.options.onBackgroundError,
        fetch: () =>
          requester.request({ grant_type: 'client_credentials', scope: key ? key.split(' ') : [] }),
      });
      this.caches.set(key, cache);
    }
    if (scope === undefined) this.defaultCache = cache;
    return cache;
  }

  /**
   * The client-credentials token for a downstream call, or ERR10009 (408) when it cannot be
   * had within `timeoutMs`; the StatusError keeps the TokenError as its cause.
   */
  async clientCredentialsWithin(timeoutMs: number, scope?: readonly string[]): Promise<string> {
    let cache: TokenCache;
    try {
      cache = this.cacheFor(scope);
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    }
    // A token at hand (the usual case) needs no timer and no race.
    const ready = cache.peek();
    if (ready) return ready.value;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no token within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const token = await Promise.race([cache.get(), timeout]);
      return token.value;
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
