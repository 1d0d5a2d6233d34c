import type http from 'node:http';
import { STATUS } from '@chain/errors';
import { LIGHT_OAUTH2_STATUS } from '@chain/oauth-client';
import { authenticatedId } from './client-auth.js';
import { sendJson } from './key-endpoints.js';
import type { Clients, Users } from './token-server-config.js';

export interface CodeRequest {
  userId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge?: string;
}

/** The provider is configured from this, so the metadata advertises what the endpoint does. */
export const CODE_ENDPOINT = {
  path: '/oauth2/code',
  responseTypes: ['code'],
  responseModes: ['query'],
} as const;

/** light-4j status bodies of the refusals that cannot go back by redirect. */
const REFUSALS = { ...LIGHT_OAUTH2_STATUS, ERR10008: STATUS.ERR10008 };

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
 * The redirect URI must be one the client registered (light-oauth2 redirects anywhere); until it
 * is known good, refusals are light-4j status bodies, then by redirect (RFC 6749 4.1.2.1).
 */
export async function codeEndpoint(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  state: { clients: Clients; users: Users; issueCode(request: CodeRequest): Promise<string> },
): Promise<{ clientId?: string } & ({ userId: string } | { reason: string })> {
  const { clients, users, issueCode } = state;
  if (req.method !== 'GET') {
    res.setHeader('Allow', 'GET');
    status(res, 'ERR10008', `Request method ${req.method ?? ''} is not allowed here`);
    return { reason: 'method' };
  }
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const userId = authenticatedId(req.headers.authorization, (id) =>
    Object.hasOwn(users, id) ? users[id].password : undefined,
  );
  if (!userId) {
    res.setHeader('WWW-Authenticate', 'Basic realm="OAuth", charset="UTF-8"');
    if (req.headers.authorization === undefined) {
      status(res, 'ERR12002', 'Missing authorization header: the user authenticates with Basic');
    } else {
      status(res, 'ERR12004', 'Invalid Basic credentials');
    }
    return { reason: 'user not authenticated' };
  }
  const clientId = query.get('client_id') ?? '';
  const client = Object.hasOwn(clients, clientId) ? clients[clientId] : undefined;
  if (!client) {
    const named = PRINTABLE_ID.test(clientId) ? `${clientId} ` : '';
    status(res, 'ERR12014', `Client ${named}is not found.`);
    return { reason: 'unknown client' };
  }
  const registered = client.redirectUri;
  const redirectUri =
    query.get('redirect_uri') ?? (registered.length === 1 ? registered[0] : undefined);
  if (redirectUri === undefined || !registered.includes(redirectUri)) {
    const description =
      registered.length === 0
        ? `Client ${clientId} has no redirect URI registered: it cannot use the authorization code grant`
        : `redirect_uri is not a redirect URI registered for client ${clientId}`;
    status(res, 'ERR12026', description);
    return { clientId, reason: 'redirect_uri not registered' };
  }
  // From here on the client learns of an error by redirect, with its state.
  const redirect = (params: Record<string, string>) => {
    const location = new URL(redirectUri);
    for (const [key, value] of Object.entries(params)) location.searchParams.append(key, value);
    const state = query.get('state');
    if (state !== null) location.searchParams.append('state', state);
    res.writeHead(302, { Location: location.href, 'Cache-Control': 'no-store' });
    res.end();
  };
  const refuse = (reason: string, error: string, description: string) => {
    redirect({ error, error_description: description });
    return { clientId, reason };
  };
  const twice = PARAMS.find((name) => query.getAll(name).length > 1);
  if (twice) {
    return refuse(`${twice} given twice`, 'invalid_request', `${twice} is given more than once`);
  }
  if (query.get('response_type') !== 'code') {
    const error = query.has('response_type') ? 'unsupported_response_type' : 'invalid_request';
    return refuse('response_type', error, 'response_type must be code');
  }
  const codeChallenge = query.get('code_challenge') ?? undefined;
  const method = query.get('code_challenge_method') ?? (codeChallenge ? 'plain' : undefined);
  if (method !== undefined && (method !== 'S256' || !S256_CHALLENGE.test(codeChallenge ?? ''))) {
    const description =
      'code_challenge must be 43 base64url characters with code_challenge_method S256';
    return refuse('code_challenge', 'invalid_request', description);
  }
  const wanted = (query.get('scope') ?? '').split(' ').filter(Boolean);
  const scope = wanted.length ? [...new Set(wanted)] : client.scope;
  if (scope.length === 0) {
    return refuse('scope', 'invalid_scope', 'the client has no scope to ask for');
  }
  if (scope.some((s) => !client.scope.includes(s))) {
    return refuse('scope', 'invalid_scope', 'the client may not ask for some of the scopes');
  }
  const code = await issueCode({ userId, clientId, redirectUri, scope, codeChallenge });
  redirect({ code });
  return { clientId, userId };
}

function status(res: http.ServerResponse, code: keyof typeof REFUSALS, description: string): void {
  const { statusCode, message } = REFUSALS[code];
  sendJson(res, statusCode, { statusCode, code, message, description });
}
