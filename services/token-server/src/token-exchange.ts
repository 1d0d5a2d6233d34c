import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import Provider, { errors, type ClientCredentials, type KoaContextWithOIDC } from 'oidc-provider';
// oidc-provider's own sender-constraint helpers, as its client_credentials grant applies them.
// An internal module without types: its functions are typed where they are used.
import * as grantHelpers from 'oidc-provider/lib/helpers/grants.js';
import type { TokenServerConfig } from './token-server-config.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
/** RFC 8693 3: an access token, or a JWT (light-4j's default subjectTokenType). */
const SUBJECT_TYPES = new Set([ACCESS_TOKEN, 'urn:ietf:params:oauth:token-type:jwt']);

type Ctx = KoaContextWithOIDC;
const helpers = grantHelpers as {
  validateDpop(p: Provider, ctx: Ctx): Promise<{ thumbprint: string; jti: string } | undefined>;
  checkDpopReplay(p: Provider, ctx: Ctx, dPoP: unknown, clientId: string): Promise<void>;
  checkDpopRequired(p: Provider, ctx: Ctx, dPoP: unknown): void;
  checkMtlsCert(p: Provider, ctx: Ctx): string | undefined;
};

/**
 * RFC 8693 token exchange under token-server.yml `tokenExchange`: a client exchanges a token it
 * was sent (its `aud` one of `subjectAudience`) for one for the next hop, keeping the subject and
 * adding itself to the `act` chain (section 4.1); bound like its client-credentials tokens.
 */
export function tokenExchange(server: TokenServerConfig, keys: Record<string, string>) {
  const publicKeys = new Map(Object.entries(keys).map(([kid, pem]) => [kid, createPublicKey(pem)]));
  const claimsOf = new WeakMap<object, Record<string, unknown>>();

  const handler = async (ctx: Ctx) => {
    const { client, params, provider } = ctx.oidc as Ctx['oidc'] & { client: { clientId: string } };
    const policy = server.tokenExchange;
    const rule = Object.hasOwn(policy, client.clientId) ? policy[client.clientId] : undefined;
    if (!rule) throw new errors.UnauthorizedClient('the client may not exchange tokens');
    const asked = params as Record<string, string | undefined>;
    if (!SUBJECT_TYPES.has(asked.subject_token_type ?? '')) {
      throw new errors.InvalidRequest('subject_token_type is not an access token or a JWT');
    }
    if (asked.requested_token_type && asked.requested_token_type !== ACCESS_TOKEN) {
      throw new errors.InvalidRequest('requested_token_type: only access tokens are issued');
    }
    const subject = verifySubject(asked.subject_token ?? '', server.issuer, publicKeys);
    const subjectAud = [subject?.aud].flat();
    if (!subject || !subjectAud.some((a) => rule.subjectAudience.includes(a as string))) {
      throw new errors.InvalidRequest('subject_token is invalid, expired or not for this client');
    }
    const audience = asked.audience;
    if (!audience || !rule.audience.includes(audience)) {
      throw new errors.InvalidTarget('the client may not exchange for this audience');
    }
    const scope = asked.scope ? asked.scope.split(' ') : rule.scope;
    const refused = scope.filter((s) => !rule.scope.includes(s));
    if (refused.length > 0) {
      throw new errors.InvalidScope(
        'the client may not exchange for this scope',
        refused.join(' '),
      );
    }
    const dPoP = await helpers.validateDpop(provider, ctx);
    const token = new provider.ClientCredentials({ client, scope: scope.join(' ') || undefined });
    token.resourceServer = new provider.ResourceServer(audience, {
      audience,
      scope: rule.scope.join(' '),
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256', kid: server.signing.kid } },
    });
    const cert = helpers.checkMtlsCert(provider, ctx);
    if (cert) token.setThumbprint('x5t', cert);
    if (dPoP) {
      await helpers.checkDpopReplay(provider, ctx, dPoP, client.clientId);
      token.setThumbprint('jkt', dPoP.thumbprint);
    }
    helpers.checkDpopRequired(provider, ctx, dPoP);
    const { sub, user_id, act } = subject;
    claimsOf.set(token, {
      sub,
      ...(user_id !== undefined && { user_id }),
      act: { sub: client.clientId, ...(act !== undefined && { act }) },
    });
    ctx.oidc.entity('ClientCredentials', token);
    ctx.body = {
      access_token: await token.save(),
      issued_token_type: ACCESS_TOKEN,
      token_type: token.tokenType,
      expires_in: token.expiration,
      scope: token.scope,
    };
  };

  return {
    register(provider: Provider) {
      const parameters = ['subject_token', 'subject_token_type', 'audience', 'scope'];
      provider.registerGrantType(TOKEN_EXCHANGE, handler, [...parameters, 'requested_token_type']);
    },
    /** formats.customizers.jwt: the subject and the delegation chain of an exchanged token. */
    customize(_ctx: Ctx, token: ClientCredentials | object, jwt: { payload: object }) {
      const claims = claimsOf.get(token);
      if (claims) Object.assign(jwt.payload, claims);
    },
  };
}

const decode = (part: string) =>
  JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;

/** The claims of a JWT this server signed (RS256, one of its kids) and not expired, else undefined. */
function verifySubject(jwt: string, issuer: string, keys: Map<string, KeyObject>) {
  const [header, payload, signature, ...rest] = jwt.split('.');
  if (signature === undefined || rest.length > 0) return undefined;
  try {
    const { alg, kid } = decode(header);
    const key = typeof kid === 'string' ? keys.get(kid) : undefined;
    const signed = Buffer.from(`${header}.${payload}`);
    if (alg !== 'RS256' || !key) return undefined;
    if (!verify('sha256', signed, key, Buffer.from(signature, 'base64url'))) return undefined;
    const claims = decode(payload);
    const live = typeof claims.exp === 'number' && claims.exp > Date.now() / 1000;
    return live && claims.iss === issuer && typeof claims.sub === 'string' ? claims : undefined;
  } catch {
    return undefined;
  }
}
