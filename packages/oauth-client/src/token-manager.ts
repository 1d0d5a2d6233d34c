import type https from 'node:https';
import { StatusError } from '@chain/errors';
import type { OutgoingTrace } from './call-headers';
import {
  clientSecrets,
  type AuthServerConfig,
  type ClientConfig,
  type SecretConfig,
} from './client-config';
import type { ClientEvents } from './client-events';
import { RenewableToken } from './renewable-token';
import { TokenSource } from './token-source';
import { TokenRequester, type AccessToken } from './token-request';
import { UserToken } from './user-token';

export interface TokenManagerOptions {
  client: ClientConfig;
  secret: SecretConfig;
  httpsAgent?: https.Agent;
  now?: () => number;
  /** Told about a failed background renewal. */
  onBackgroundError?: (err: unknown) => void;
  events?: ClientEvents;
}

/** The authorization code exchange's extras. */
export interface CodeExchange {
  /** The redirect URI the code was issued for; client.yml's `redirect_uri` when absent. */
  redirectUri?: string;
  /** RFC 7636: the verifier of the `code_challenge` the code was asked with. */
  codeVerifier?: string;
  trace?: OutgoingTrace;
}

/**
 * The tokens of one service, from client.yml and secret.yml:
 * - its own client-credentials tokens, kept and renewed per scope set; with
 *   `oauth.multipleAuthServers`, one per downstream serviceId from that serviceId's auth server
 *   (`client_credentials.serviceIdAuthServers`, chosen by `pathPrefixServices`), each with its
 *   own client, scope and cache;
 * - users' tokens: the authorization code exchange, and the refresh token grant that keeps a
 *   user's token valid without the user (`UserToken`).
 * Misconfiguration (no server_url, no client_id, no secret) throws a TypeError naming the key
 * when built or first asked.
 */
export class TokenManager {
  private readonly sources = new Map<string, TokenSource>();
  private defaultSource: TokenSource | undefined;
  private readonly requesters = new Map<string, TokenRequester>();
  private readonly secrets: SecretConfig;
  /** pathPrefixServices, longest prefix first. */
  private readonly prefixes: [string, string][];

  constructor(private readonly options: TokenManagerOptions) {
    this.secrets = clientSecrets(options.client, options.secret);
    this.prefixes = Object.entries(options.client.pathPrefixServices).sort(
      (a, b) => b[0].length - a[0].length,
    );
    const { token } = options.client.oauth;
    // Fail at start for a configured grant that cannot work.
    if (token.client_credentials && !options.client.oauth.multipleAuthServers) {
      this.requester('client_credentials');
    }
    if (token.authorization_code) this.requester('authorization_code');
  }

  /** Whether client.yml has a client_credentials grant. */
  get hasClientCredentials(): boolean {
    return this.options.client.oauth.token.client_credentials !== undefined;
  }

  /** Whether the own tokens come from several auth servers, by downstream serviceId. */
  get multipleAuthServers(): boolean {
    return this.options.client.oauth.multipleAuthServers;
  }

  /** The serviceId of a downstream path (pathPrefixServices, longest prefix, whole segments). */
  serviceIdFor(path: string): string | undefined {
    for (const [prefix, serviceId] of this.prefixes) {
      const p = prefix.replace(/\/+$/, '');
      if (path === p || path.startsWith(`${p}/`) || p === '') return serviceId;
    }
    return undefined;
  }

  /**
   * The own token of a downstream. With `multipleAuthServers`: the serviceId's auth server and
   * client (a serviceId without an entry throws a TypeError naming it); otherwise the
   * client_credentials grant of client.yml, whatever the serviceId.
   */
  forService(serviceId: string | undefined): TokenSource {
    if (!this.multipleAuthServers) return this.source(undefined);
    const servers = this.options.client.oauth.token.client_credentials?.serviceIdAuthServers ?? {};
    if (serviceId === undefined || !Object.prototype.hasOwnProperty.call(servers, serviceId)) {
      throw new TypeError(
        `client.yml oauth.token.client_credentials.serviceIdAuthServers has no entry for ${
          serviceId === undefined
            ? 'the downstream (no serviceId: see pathPrefixServices)'
            : `serviceId ${serviceId}`
        }`,
      );
    }
    let source = this.sources.get(`service:${serviceId}`);
    if (!source) {
      source = this.makeSource(
        this.serviceRequester(serviceId, servers[serviceId]),
        servers[serviceId].scope ?? [],
      );
      this.sources.set(`service:${serviceId}`, source);
    }
    return source;
  }

  /**
   * The service's own client-credentials token for a scope set (client.yml's scope when
   * omitted), kept, or from one shared renewal. Throws TokenFetchError.
   */
  clientCredentials(scope?: readonly string[]): Promise<AccessToken> {
    return this.source(scope).token.get();
  }

  /** The renewal in flight of a scope set's token, if any (it settles when the renewal does). */
  renewal(scope?: readonly string[]): Promise<AccessToken> | undefined {
    return this.source(scope).token.renewal;
  }

  /**
   * The client-credentials token for a downstream call, or ERR10009 (408) when it cannot be
   * had within `timeoutMs`; the StatusError keeps the TokenFetchError as its cause.
   */
  async clientCredentialsWithin(
    timeoutMs: number,
    scope?: readonly string[],
    trace?: OutgoingTrace,
  ): Promise<string> {
    let source: TokenSource;
    try {
      source = this.source(scope);
    } catch (err) {
      throw new StatusError('ERR10009', [], { cause: err });
    }
    return source.within(timeoutMs, trace);
  }

  /**
   * A user's code turned into a user token (client.yml `authorization_code`), kept valid by the
   * refresh grant without the user. Scope: client.yml's, else what the code was issued for.
   * Throws TokenFetchError (`invalid_grant` for a wrong, used or expired code, or a redirect URI
   * other than the code's).
   */
  authorizationCode(code: string, exchange: CodeExchange = {}): Promise<UserToken> {
    const requester = this.requester('authorization_code');
    const cfg = this.options.client.oauth.token.authorization_code!;
    return requester
      .request(
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: exchange.redirectUri ?? cfg.redirect_uri,
          code_verifier: exchange.codeVerifier,
          scope: cfg.scope,
        },
        exchange.trace?.childHeaders(),
      )
      .then((first) => this.userToken(first));
  }

  /**
   * A user token from a token response that carries a refresh token (the code exchange, or one
   * obtained elsewhere), renewed by the refresh grant.
   */
  userToken(first: AccessToken): UserToken {
    const { token } = this.options.client.oauth;
    const requester = this.requester(
      token.refresh_token?.client_id ? 'refresh_token' : 'authorization_code',
      token.refresh_token?.uri,
    );
    return new UserToken(first, {
      clientId: requester.clientId,
      tokenRenewBeforeExpired: token.tokenRenewBeforeExpired,
      expiredRefreshRetryDelay: token.expiredRefreshRetryDelay,
      earlyRefreshRetryDelay: token.earlyRefreshRetryDelay,
      now: this.options.now,
      events: this.options.events,
      onBackgroundError: this.options.onBackgroundError,
      refresh: (refreshToken, trace) =>
        requester.request(
          {
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            scope: token.refresh_token?.scope,
          },
          trace?.childHeaders(),
        ),
    });
  }

  /** The token of one scope set at the default auth server; the default set's is kept at hand. */
  private source(scope: readonly string[] | undefined): TokenSource {
    if (scope === undefined && this.defaultSource) return this.defaultSource;
    const requester = this.requester('client_credentials');
    const wanted = scope ?? this.options.client.oauth.token.client_credentials?.scope ?? [];
    const key = [...new Set(wanted)].sort().join(' ');
    let source = this.sources.get(key);
    if (!source) {
      source = this.makeSource(requester, key ? key.split(' ') : []);
      this.sources.set(key, source);
    }
    if (scope === undefined) this.defaultSource = source;
    return source;
  }

  private makeSource(requester: TokenRequester, scope: readonly string[]): TokenSource {
    const { token } = this.options.client.oauth;
    const { now, events, onBackgroundError } = this.options;
    const renewable = new RenewableToken({
      clientId: requester.clientId,
      tokenRenewBeforeExpired: token.tokenRenewBeforeExpired,
      expiredRefreshRetryDelay: token.expiredRefreshRetryDelay,
      earlyRefreshRetryDelay: token.earlyRefreshRetryDelay,
      now,
      events,
      onBackgroundError,
      fetch: (_trigger, trace) =>
        requester.request({ grant_type: 'client_credentials', scope }, trace?.childHeaders()),
    });
    return new TokenSource(renewable, events, now);
  }

  /** The requester of a grant of client.yml, made once; a missing key is a TypeError naming it. */
  private requester(
    grant: 'client_credentials' | 'authorization_code' | 'refresh_token',
    uri?: string,
  ): TokenRequester {
    const name = uri ? `${grant} ${uri}` : grant;
    const made = this.requesters.get(name);
    if (made) return made;
    const { token } = this.options.client.oauth;
    const cfg = token[grant];
    if (!cfg) throw new TypeError(`client.yml oauth.token.${grant} is required`);
    if (!token.server_url) throw new TypeError('client.yml oauth.token.server_url is required');
    if (!cfg.client_id)
      throw new TypeError(`client.yml oauth.token.${grant}.client_id is required`);
    const secretKey = {
      client_credentials: 'clientCredentialsClientSecret',
      authorization_code: 'authorizationCodeClientSecret',
      refresh_token: 'refreshTokenClientSecret',
    }[grant] as keyof SecretConfig;
    const secret = this.secrets[secretKey];
    if (!secret) throw new TypeError(`secret.yml ${secretKey} is required for ${cfg.client_id}`);
    const requester = this.makeRequester(token.server_url, uri ?? cfg.uri, cfg.client_id, secret);
    this.requesters.set(name, requester);
    return requester;
  }

  private serviceRequester(serviceId: string, server: AuthServerConfig): TokenRequester {
    const { token } = this.options.client.oauth;
    const serverUrl = server.server_url ?? token.server_url;
    if (!serverUrl) {
      throw new TypeError(
        `client.yml oauth.token.client_credentials.serviceIdAuthServers.${serviceId}.server_url is required`,
      );
    }
    const uri = server.uri ?? token.client_credentials?.uri ?? '/oauth2/token';
    return this.makeRequester(serverUrl, uri, server.client_id, server.client_secret);
  }

  private makeRequester(
    serverUrl: string,
    uri: string,
    clientId: string,
    clientSecret: string,
  ): TokenRequester {
    return new TokenRequester({
      serverUrl,
      uri,
      clientId,
      clientSecret,
      timeoutMs: this.options.client.request.timeout,
      httpsAgent: this.options.httpsAgent,
      now: this.options.now,
    });
  }
}
