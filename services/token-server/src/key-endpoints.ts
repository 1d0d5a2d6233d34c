import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { keyServiceAnswer, type ClientCheck } from '@chain/oauth-client';
import { authenticatedId, basicCredentials } from './client-auth.js';
import type { Clients } from './token-server-config.js';

export function loadKeySet(certificates: Record<string, string>) {
  const pems: Record<string, string> = {};
  const keys: object[] = [];
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

function clientCheck(header: string | undefined, clients: Clients): ClientCheck {
  if (header === undefined) return { ok: false, reason: 'missing' };
  const clientId = basicCredentials(header)?.clientId;
  if (clientId === undefined) return { ok: false, reason: 'wrong-secret' };
  if (!Object.hasOwn(clients, clientId)) return { ok: false, reason: 'unknown-client', clientId };
  return authenticatedId(header, (id) => clients[id].secret)
    ? { ok: true }
    : { ok: false, reason: 'wrong-secret' };
}

/** light-oauth2's key distribution (the JWKS is public). False when the path is no key route. */
export function keyEndpoints(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  { keys, clients }: { keys: ReturnType<typeof loadKeySet>; clients: Clients },
): boolean {
  const kid = /^\/oauth2\/key\/([^/]+)$/.exec(path)?.[1];
  if (kid === undefined && path !== '/oauth2/jwks') return false;
  if (req.method !== 'GET') {
    res.setHeader('Allow', 'GET');
    sendJson(res, 405, { error: 'invalid_request', error_description: 'method not allowed' });
  } else if (kid === undefined) {
    sendJson(res, 200, keys.jwks);
  } else {
    let keyId = kid;
    try {
      keyId = decodeURIComponent(kid);
    } catch {
      // a malformed escape: an unknown kid, as written
    }
    const { status, contentType, body } = keyServiceAnswer(keyId, req.headers.authorization, {
      authenticate: (header) => clientCheck(header, clients),
      certificate: (id) => (Object.hasOwn(keys.pems, id) ? keys.pems[id] : undefined),
    });
    res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
    res.end(body);
  }
  return true;
}
