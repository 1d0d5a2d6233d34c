import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { keyServiceAnswer, type ClientCheck } from '@chain/oauth-client';
import { basicCredentials, authenticates } from './client-auth';
import type { ClientRegistration } from './token-server-config';

export interface KeySet {
  /** kid -> PEM certificate. */
  pems: Record<string, string>;
  /** The public keys as a JWKS. */
  jwks: { keys: Record<string, unknown>[] };
}

/** Reads the served certificates (at start and on reload). */
export function loadKeySet(certificates: Record<string, string>): KeySet {
  const pems: Record<string, string> = {};
  const keys: Record<string, unknown>[] = [];
  for (const [kid, file] of Object.entries(certificates)) {
    const pem = fs.readFileSync(file, 'utf8');
    pems[kid] = pem;
    keys.push({ ...createPublicKey(pem).export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' });
  }
  return { pems, jwks: { keys } };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** light-oauth2's client check of the key service: no header, unknown client, wrong secret. */
function clientCheck(
  header: string | undefined,
  clients: Record<string, ClientRegistration>,
): ClientCheck {
  if (header === undefined) return { ok: false, reason: 'missing' };
  const credentials = basicCredentials(header);
  if (!credentials) return { ok: false, reason: 'wrong-secret' };
  if (!Object.prototype.hasOwnProperty.call(clients, credentials.clientId)) {
    return { ok: false, reason: 'unknown-client', clientId: credentials.clientId };
  }
  return authenticates(header, clients) ? { ok: true } : { ok: false, reason: 'wrong-secret' };
}

/**
 * light-oauth2's key distribution, answering as light-oauth2 does (`keyServiceAnswer`):
 * `GET /oauth2/key/{kid}` the PEM certificate to a known client (Basic auth), an unknown kid
 * 400 ERR12030 (404 ERR12017 for another provider's); `GET /oauth2/jwks` the JWKS (public, as
 * any JWKS). The key set and clients are read per request, so a reload takes effect at once.
 * Returns false when the request is not for a key route.
 */
export function keyEndpoints(
  current: () => { keys: KeySet; clients: Record<string, ClientRegistration> },
) {
  return (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0];
    const { keys, clients } = current();
    if (path === '/oauth2/jwks') {
      if (req.method !== 'GET') return methodNotAllowed(res);
      sendJson(res, 200, keys.jwks);
      return true;
    }
    const match = /^\/oauth2\/key\/([^/]+)$/.exec(path);
    if (!match) return false;
    if (req.method !== 'GET') return methodNotAllowed(res);
    let kid = match[1];
    try {
      kid = decodeURIComponent(kid);
    } catch {
      // a malformed escape is simply an unknown kid
    }
    const answer = keyServiceAnswer(kid, req.headers.authorization, {
      authenticate: (header) => clientCheck(header, clients),
      certificate: (keyId) =>
        Object.prototype.hasOwnProperty.call(keys.pems, keyId) ? keys.pems[keyId] : undefined,
    });
    res.writeHead(answer.status, {
      'Content-Type': answer.contentType,
      'Cache-Control': 'no-store',
    });
    res.end(answer.body);
    return true;
  };
}

function methodNotAllowed(res: http.ServerResponse): true {
  res.setHeader('Allow', 'GET');
  sendJson(res, 405, { error: 'invalid_request', error_description: 'method not allowed' });
  return true;
}
