import type http from 'node:http';
import { authenticatedId } from './client-auth';
import { sendJson } from './key-endpoints';
import type { CodeRequest } from './provider';
import type { ClientRegistration, UserRegistration } from './token-server-config';

/** What the code endpoint did, for the log and `/stats` (never a code or a password). */
export type CodeOutcome =
  | { issued: true; clientId: string; userId: string }
  | { issued: false; clientId?: string; reason: string };

export interface CodeEndpointState {
  clients: Record<string, ClientRegistration>;
  users: Record<string, UserRegistration>;
  issueCode(request: CodeRequest): Promise<string>;
}

/**
 * What the code endpoint does, in one place: the path it answers at (light-oauth2's), the
 * `response_type` and response mode it answers with, and the PKCE methods it accepts (RFC 7636;
 * `plain` is refused). The provider is configured from it (oidc-provider's authorization route,
 * response types and PKCE methods), so the server's metadata advertises what this endpoint does.
 */
export const CODE_ENDPOINT: {
  path: string;
  responseTypes: readonly string[];
  responseModes: readonly string[];
  pkceMethods: readonly string[];
} = {
  path: '/oauth2/code',
  responseTypes: ['code'],
  responseModes: ['query'],
  pkceMethods: ['S256'],
};

/** light-4j status bodies of the answers that cannot go back to the client by redirect. */
const STATUS = {
  ERR12002: [401, 'MISSING_AUTHORIZATION_HEADER'],
  ERR12004: [401, 'INVALID_BASIC_CREDENTIALS'],
  ERR12014: [404, 'CLIENT_NOT_FOUND'],
  ERR12026: [400, 'MISMATCH_REDIRECT_URI'],
  ERR10008: [405, 'METHOD_NOT_ALLOWED'],
} as const;

const PRINTABLE_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** RFC 7636 4.2: 43 characters of base64url for S256. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
];

/**
 * `GET /oauth2/code` as light-oauth2's code service answers it, without a login page: the user
 * authenticates with Basic credentials (users.yml), and the answer is a redirect (302) to the
 * client's `redirect_uri` with `code` and `state`. What differs from light-oauth2, on purpose:
 * `redirect_uri` must be one the client registered (light-oauth2 redirects anywhere), and errors
 * the client should see go back by redirect as RFC 6749 4.1.2.1 says (`error`, `state`).
 *
 * - no or wrong Basic credentials: 401 ERR12002 / ERR12004 with `WWW-Authenticate: Basic`
 * - unknown `client_id`: 404 ERR12014; a `redirect_uri` the client did not register (or none
 *   given when it registered several): 400 ERR12026 (never a redirect to an unchecked URI)
 * - `response_type` other than `code`, a parameter given twice, a bad PKCE challenge: redirect
 *   with `error=unsupported_response_type` / `invalid_request`; a scope the client may not ask
 *   for: `error=invalid_scope`
 * - else a code: single use, `codeLifetimeSeconds`, bound to the client, the redirect URI, the
 *   user and the scope (the client's registered scopes when none is asked).
 */
export async function codeEndpoint(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  state: CodeEndpointState,
): Promise<CodeOutcome> {
  if (req.method !== 'GET') {
    res.setHeader('Allow', 'GET');
    status(res, 'ERR10008', `Request method ${req.method ?? ''} is not allowed here`);
    return { issued: false, reason: 'method' };
  }
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const userId = authenticate(req.headers.authorization, state.users);
  if (!userId) {
    res.setHeader('WWW-Authenticate', 'Basic realm="OAuth", charset="UTF-8"');
    if (req.headers.authorization === undefined) {
      status(res, 'ERR12002', 'Missing authorization header: the user authenticates with Basic');
    } else {
      status(res, 'ERR12004', 'Invalid Basic credentials');
    }
    return { issued: false, reason: 'user not authenticated' };
  }
  const clientId = query.get('client_id') ?? '';
  const client = Object.prototype.hasOwnProperty.call(state.clients, clientId)
    ? state.clients[clientId]
    : undefined;
  if (!client) {
    const named = PRINTABLE_ID.test(clientId) ? `${clientId} ` : '';
    status(res, 'ERR12014', `Client ${named}is not found.`);
    return { issued: false, reason: 'unknown client' };
  }
  const asked = query.get('redirect_uri');
  const redirectUri =
    asked === null ? (client.redirectUri.length === 1 ? client.redirectUri[0] : undefined) : asked;
  if (redirectUri === undefined || !client.redirectUri.includes(redirectUri)) {
    status(
      res,
      'ERR12026',
      client.redirectUri.length === 0
        ? `Client ${clientId} has no redirect URI registered: it cannot use the authorization code grant`
        : `redirect_uri is not a redirect URI registered for client ${clientId}`,
    );
    return { issued: false, clientId, reason: 'redirect_uri not registered' };
  }
  // From here on the client learns of an error by redirect, with its state.
  const back = (params: Record<string, string>) => redirect(res, redirectUri, params, query);
  const twice = PARAMS.find((name) => query.getAll(name).length > 1);
  if (twice) {
    back({ error: 'invalid_request', error_description: `${twice} is given more than once` });
    return { issued: false, clientId, reason: `${twice} given twice` };
  }
  const responseType = query.get('response_type') ?? '';
  if (!CODE_ENDPOINT.responseTypes.includes(responseType)) {
    back({
      error: query.has('response_type') ? 'unsupported_response_type' : 'invalid_request',
      error_description: 'response_type must be code',
    });
    return { issued: false, clientId, reason: 'response_type' };
  }
  const challenge = query.get('code_challenge') ?? undefined;
  const method = query.get('code_challenge_method') ?? (challenge ? 'plain' : undefined);
  if (
    method !== undefined &&
    (!CODE_ENDPOINT.pkceMethods.includes(method) || !challenge || !S256_CHALLENGE.test(challenge))
  ) {
    back({
      error: 'invalid_request',
      error_description:
        'code_challenge must be 43 base64url characters with code_challenge_method S256',
    });
    return { issued: false, clientId, reason: 'code_challenge' };
  }
  const wanted = (query.get('scope') ?? '').split(' ').filter(Boolean);
  const scope = wanted.length ? [...new Set(wanted)] : client.scope;
  const refused = scope.filter((s) => !client.scope.includes(s));
  if (refused.length || scope.length === 0) {
    back({
      error: 'invalid_scope',
      error_description: refused.length
        ? 'the client may not ask for some of the scopes'
        : 'the client has no scope to ask for',
    });
    return { issued: false, clientId, reason: 'scope' };
  }
  const code = await state.issueCode({
    userId,
    clientId,
    redirectUri,
    scope,
    ...(challenge ? { codeChallenge: challenge } : {}),
  });
  back({ code });
  return { issued: true, clientId, userId };
}

/** The user of a Basic header whose password matches. */
function authenticate(
  header: string | undefined,
  users: Record<string, UserRegistration>,
): string | undefined {
  return authenticatedId(header, (id) =>
    Object.prototype.hasOwnProperty.call(users, id) ? users[id].password : undefined,
  );
}

function status(res: http.ServerResponse, code: keyof typeof STATUS, description: string): void {
  const [statusCode, message] = STATUS[code];
  sendJson(res, statusCode, { statusCode, code, message, description });
}

/** 302 to the redirect URI with the parameters (and the client's `state`), never cached. */
function redirect(
  res: http.ServerResponse,
  redirectUri: string,
  params: Record<string, string>,
  query: URLSearchParams,
): void {
  const location = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) location.searchParams.append(key, value);
  const state = query.get('state');
  if (state !== null) location.searchParams.append('state', state);
  res.writeHead(302, { Location: location.href, 'Cache-Control': 'no-store' });
  res.end();
}
