import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from './authorizer.js';
import { createVerifier, type Refusal, type VerifierOptions } from './verifier.js';

/**
 * For a node:http or node:https handler: resolves with the verified caller; with null when
 * nothing was verified (`skipPathPrefixes`); with undefined once it has answered a refusal.
 */
export function createNodeVerifier(options: VerifierOptions) {
  const verifier = createVerifier(options);
  return async (
    req: IncomingMessage,
    res: ServerResponse,
    requiredScopes: readonly string[] = [],
  ): Promise<AuthInfo | null | undefined> => {
    const verdict = await verifier.verify({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      requiredScopes,
      socket: req.socket,
      remoteAddress: req.socket.remoteAddress,
    });
    if (verdict.ok) return verdict.auth ?? null;
    sendRefusal(res, verdict.refusal);
    return undefined;
  };
}

export function sendRefusal(res: ServerResponse, { status, headers, body }: Refusal): void {
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) }).end(body);
}
