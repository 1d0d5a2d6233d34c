import { ConfigError } from '@chain/errors';
import { BoundedMap, pathPrefixMatcher } from '@chain/security';
import type { OutgoingTrace } from './call-headers.js';
import {
  grantSettings,
  type ClientFiles,
  type GrantName,
  type GrantSettings,
} from './client-config.js';
import type { ClientEvents } from './client-events.js';
import { DpopKey } from './dpop-key.js';
import { RenewableToken, TokenSource, UserToken } from './renewable-token.js';
import { TokenRequester, type AccessToken, type Grant } from './token-request.js';
import type { Transport } from '@chain/http';

export interface TokenManagerOptions extends Omit<ClientFiles, 'clientFile' | 'secretFile'> {
  clientFile?: string;
  secretFile?: string;
  http: Transport;
  now?: () => number;
  onBackgroundError?: (err: unknown) => void;
  events?: ClientEvents;
}

/** A configured grant that cannot be asked for is a ConfigError at start. */
export class TokenManager {
  /** By serviceId with multipleAuthServers. */
  private readonly sources = new Map<string, TokenSource>();
  private ownSource: TokenSource | undefined;
  /** Exchanged tokens by subject token (one audience): the tokens of the calls in flight. */
  private readonly exchanged = new BoundedMap<string, TokenSource>(1024);
  private readonly requesters: Partial<Record<GrantName, TokenRequester>> = {};
  private readonly files: ClientFiles;
  /** By pathPrefixServices. */
  readonly serviceIdFor: (path: string) => string | undefined;
  readonly dpopKey: DpopKey | undefined;

  constructor(private readonly options: TokenManagerOptions) {
    const { client, secret, clientFile = 'client.yml', secretFile = 'secret.yml' } = options;
    this.files = { client, secret, clientFile, secretFile };
    this.serviceIdFor = pathPrefixMatcher(Object.entries(client.pathPrefixServices));
    const { token, multipleAuthServers } = client.oauth;
    const bindings = [token.client_credentials?.tokenBinding, token.token_exchange?.tokenBinding];
    if (bindings.includes('dpop')) this.dpopKey = new DpopKey();
    if (token.client_credentials && !multipleAuthServers) this.requester('client_credentials');
    if (token.authorization_code) this.requester('authorization_code');
    if (token.token_exchange?.audience) this.requester('token_exchange');
  }

  forService(serviceId: string | undefined): TokenSource {
    const { oauth } = this.options.client;
    if (!oauth.multipleAuthServers) {
      // Scopes sorted and once each, as a token server names them.
      const scope = [...new Set(oauth.token.client_credentials?.scope)].sort();
      const grant = { grant_type: 'client_credentials', scope } as const;
      return (this.ownSource ??= this.makeSource(this.requester('client_credentials'), grant));
    }
    const servers = oauth.token.client_credentials?.serviceIdAuthServers ?? {};
    if (serviceId === undefined || !Object.hasOwn(servers, serviceId)) {
      const key = 'oauth.token.client_credentials.serviceIdAuthServers';
      const which =
        serviceId === undefined
          ? 'the downstream (no serviceId: see pathPrefixServices)'
          : `serviceId ${serviceId}`;
      throw new ConfigError(this.files.clientFile, key, `has no entry for ${which}`);
    }
    const made = this.sources.get(serviceId);
    if (made) return made;
    // `clientRules` made sure of a server_url.
    const server = servers[serviceId];
    const requester = this.makeRequester(
      {
        serverUrl: (server.server_url ?? oauth.token.server_url)!,
        uri: server.uri ?? oauth.token.client_credentials?.uri ?? '/oauth2/token',
        clientId: server.client_id,
        authMethod: 'client_secret_basic',
        clientSecret: server.client_secret,
      },
      oauth.token.client_credentials?.tokenBinding === 'dpop' ? this.dpopKey : undefined,
    );
    const grant = { grant_type: 'client_credentials', scope: server.scope } as const;
    const source = this.makeSource(requester, grant);
    this.sources.set(serviceId, source);
    return source;
  }

  /**
   * RFC 8693: `subjectToken` (the token a request brought) exchanged for one for
   * oauth.token.token_exchange's audience, cached and renewed as the own tokens are.
   */
  forSubject(subjectToken: string): TokenSource {
    const made = this.exchanged.get(subjectToken);
    if (made) return made;
    const requester = this.requester('token_exchange');
    const { audience, scope, subjectTokenType } = this.options.client.oauth.token.token_exchange!;
    const source = this.makeSource(requester, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subjectToken,
      subject_token_type: subjectTokenType,
      audience: audience!,
      scope,
    });
    this.exchanged.set(subjectToken, source);
    return source;
  }

  async authorizationCode(
    code: string,
    exchange: { redirectUri?: string; codeVerifier?: string; trace?: OutgoingTrace } = {},
  ): Promise<UserToken> {
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

  userToken(first: AccessToken): UserToken {
    const requester = this.requester('refresh_token');
    const scope = this.options.client.oauth.token.refresh_token?.scope;
    return new UserToken(first, {
      ...this.renewal(requester),
      refresh: (refreshToken, trace) =>
        requester.request(
          { grant_type: 'refresh_token', refresh_token: refreshToken, scope },
          trace?.childHeaders(),
        ),
    });
  }

  private makeSource(requester: TokenRequester, grant: Grant): TokenSource {
    const renewable = new RenewableToken({
      ...this.renewal(requester),
      fetch: (_trigger, trace) => requester.request(grant, trace?.childHeaders()),
    });
    return new TokenSource(renewable, requester.dpop);
  }

  private renewal(requester: TokenRequester) {
    const { token } = this.options.client.oauth;
    const { now, events, onBackgroundError } = this.options;
    return {
      clientId: requester.clientId,
      tokenRenewBeforeExpired: token.tokenRenewBeforeExpired,
      expiredRefreshRetryDelay: token.expiredRefreshRetryDelay,
      earlyRefreshRetryDelay: token.earlyRefreshRetryDelay,
      now,
      events,
      onBackgroundError,
    };
  }

  private requester(grant: GrantName): TokenRequester {
    // Only the service's own tokens are bound to its DPoP key; users' tokens are not.
    const { token } = this.options.client.oauth;
    const own = grant === 'client_credentials' || grant === 'token_exchange';
    const dpop = own && token[grant]?.tokenBinding === 'dpop' ? this.dpopKey : undefined;
    return (this.requesters[grant] ??= this.makeRequester(grantSettings(this.files, grant), dpop));
  }

  private makeRequester(settings: GrantSettings, dpop?: DpopKey): TokenRequester {
    return new TokenRequester({
      ...settings,
      dpop,
      timeoutMs: this.options.client.request.timeout,
      http: this.options.http,
      now: this.options.now,
    });
  }
}
