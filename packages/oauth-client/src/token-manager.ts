import { ConfigError } from '@chain/errors';
import type { OutgoingTrace } from './call-headers';
import {
  grantSettings,
  type ClientConfig,
  type ClientFiles,
  type GrantName,
  type GrantSettings,
  type SecretConfig,
} from './client-config';
import type { ClientEvents } from './client-events';
import { DpopKey } from './dpop-key';
import { HttpClient } from './http-client';
import { RenewableToken } from './renewable-token';
import { TokenSource } from './token-source';
import { TokenRequester, type AccessToken } from './token-request';
import type { Transport } from './transport';
import { UserToken } from './user-token';

export interface TokenManagerOptions {
  client: ClientConfig;
  secret: SecretConfig;
  /** The files client.yml and secret.yml came from, named by a ConfigError. */
  files?: { client: string; secret: string };
  /** The service's `HttpClient`; one of client.yml's own settings when absent. */
  http?: Transport;
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
 * A grant that cannot be asked for (`grantSettings`: no server_url, no client, no secret) is a
 * ConfigError naming the file and key, when the manager is built (the configured client
 * credentials and authorization code grants) or the grant first used.
 */
export class TokenManager {
  private readonly sources = new Map<string, TokenSource>();
  private defaultSource: TokenSource | undefined;
  private readonly requesters = new Map<string, TokenRequester>();
  private readonly files: ClientFiles;
  private readonly http: Transport;
  /** pathPrefixServices, longest prefix first. */
  private readonly prefixes: [string, string][];
  /** The service's DPoP key (client_credentials.tokenBinding dpop), made at start. */
  readonly dpopKey: DpopKey | undefined;

  constructor(private readonly options: TokenManagerOptions) {
    const { client, secret, files } = options;
    this.files = {
      client,
      secret,
      clientFile: files?.client ?? 'client.yml',
      secretFile: files?.secret ?? 'secret.yml',
    };
    this.http = options.http ?? new HttpClient(client);
    this.prefixes = Object.entries(client.pathPrefixServices).sort(
      (a, b) => b[0].length - a[0].length,
    );
    const { token, multipleAuthServers } = client.oauth;
    if (token.client_credentials?.tokenBinding === 'dpop') {
      this.dpopKey = new DpopKey({ now: options.now });
    }
    // Fail at start for a configured grant that cannot work.
    if (token.client_credentials && !multipleAuthServers) this.requester('client_credentials');
    if (token.authorization_code) this.requester('authorization_code');
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
   * client (a serviceId without an entry is a ConfigError naming the key); otherwise the
   * client_credentials grant of client.yml, whatever the serviceId.
   */
  forService(serviceId: string | undefined): TokenSource {
    const { oauth } = this.options.client;
    if (!oauth.multipleAuthServers) return this.source(undefined);
    const servers = oauth.token.client_credentials?.serviceIdAuthServers ?? {};
    if (serviceId === undefined || !Object.prototype.hasOwnProperty.call(servers, serviceId)) {
      throw new ConfigError(
        this.files.clientFile,
        'oauth.token.client_credentials.serviceIdAuthServers',
        `has no entry for ${
          serviceId === undefined
            ? 'the downstream (no serviceId: see pathPrefixServices)'
            : `serviceId ${serviceId}`
        }`,
      );
    }
    let source = this.sources.get(`service:${serviceId}`);
    if (!source) {
      // The schema made sure of a server_url, its own or oauth.token's.
      const server = servers[serviceId];
      const requester = this.makeRequester(
        {
          serverUrl: (server.server_url ?? oauth.token.server_url)!,
          uri: server.uri ?? oauth.token.client_credentials?.uri ?? '/oauth2/token',
          clientId: server.client_id,
          authMethod: 'client_secret_basic',
          clientSecret: server.client_secret,
        },
        this.dpopKey,
      );
      source = this.makeSource(requester, server.scope ?? []);
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

  /**
   * A user's code turned into a user token (client.yml `authorization_code`), kept valid by the
   * refresh grant without the user. Scope: client.yml's, else what the code was issued for.
   * Throws TokenFetchError (`invalid_grant` for a wrong, used or expired code, or a redirect URI
   * other than the code's).
   */
  async authorizationCode(code: string, exchange: CodeExchange = {}): Promise<UserToken> {
    const requester = this.requester('authorization_code');
    const cfg = this.options.client.oauth.token.authorization_code!;
    const first = await requester.request(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: exchange.redirectUri ?? cfg.redirect_uri,
        code_verifier: exchange.codeVerifier,
        scope: cfg.scope,
      },
      exchange.trace?.childHeaders(),
    );
    return this.userToken(first);
  }

  /**
   * A user token from a token response that carries a refresh token (the code exchange, or one
   * obtained elsewhere), renewed by the refresh grant.
   */
  userToken(first: AccessToken): UserToken {
    const { token } = this.options.client.oauth;
    const requester = this.requester('refresh_token');
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
    return new TokenSource(renewable, events, now, this.dpopKey);
  }

  /** The requester of a grant of client.yml, made once (`grantSettings` says what it needs). */
  private requester(grant: GrantName): TokenRequester {
    let made = this.requesters.get(grant);
    if (!made) {
      // Only the service's own tokens are bound to its DPoP key; users' tokens are not.
      const dpop = grant === 'client_credentials' ? this.dpopKey : undefined;
      made = this.makeRequester(grantSettings(this.files, grant), dpop);
      this.requesters.set(grant, made);
    }
    return made;
  }

  private makeRequester(settings: GrantSettings, dpop?: DpopKey): TokenRequester {
    return new TokenRequester({
      ...settings,
      dpop,
      timeoutMs: this.options.client.request.timeout,
      http: this.http,
      now: this.options.now,
    });
  }
}
