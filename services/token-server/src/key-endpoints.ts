import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { authenticates } from './client-auth';
import type { ClientRegistration } from './token-server-config';

export interface KeySet {
  /** kid -> PEM certificate. */
  pems: Record<string, string>;
  /** The public keys as a JWKS. */
  jwks: { keys: Record<string, unknown>[] };
}

/** Reads the served certificates once, at start. */
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

/**
 * light-oauth2's key distribution: `GET /oauth2/key/{kid}` answers the PEM certificate to a
 * known client (Basic auth); `GET /oauth2/jwks` answers the JWKS (public, as any JWKS).
 * Returns false when the request is not for a key route.
 */
export function keyEndpoints(keys: KeySet, clients: Record<string, ClientRegistration>) {
  return (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/oauth2/jwks') {
      if (req.method !== 'GET') return methodNotAllowed(res);
      sendJson(res, 200, keys.jwks);
      return true;
    }
    const match = /^\/oauth2\/key\/([^/]+)$/.exec(path);
    if (!match) return false;
    if (req.method !== 'GET') return methodNotAllowed(res);
    if (!authenticates(req.headers.authorization, clients)) {
      res.setHeader('WWW-Authenticate', 'Basic realm="oauth2-key"');
      sendJson(res, 401, {
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
      return true;
    }
    let kid = match[1];
    try {
      kid = decodeURIComponent(kid);
    } catch {
      // a malformed escape is simply an unknown kid
    }
    const pem = Object.prototype.hasOwnProperty.call(keys.pems, kid) ? keys.pems[kid] : undefined;
    if (!pem) {
      sendJson(res, 404, { error: 'not_found', error_description: 'unknown kid' });
      return true;
    }
    res.writeHead(200, { 'Content-Type': 'application/text' });
    res.end(pem);
    return true;
  };
}

function methodNotAllowed(res: http.ServerResponse): true {
  res.setHeader('Allow', 'GET');
  sendJson(res, 405, { error: 'invalid_request', error_description: 'method not allowed' });
  return true;
}
