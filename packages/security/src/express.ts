import type { RequestHandler } from 'express';
import type { AuthInfo } from './authorizer.js';
import { sendRefusal } from './node.js';
import { createVerifier, type VerifierOptions } from './verifier.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own declaration merging
  namespace Express {
    interface Request {
      /** The verified caller; absent on a path of `skipPathPrefixes`. */
      auth?: AuthInfo;
    }
  }
}

/** `const requireScopes = createExpressVerifier(options)`; `app.get(path, requireScopes(['x']), …)`. */
export function createExpressVerifier(options: VerifierOptions) {
  const verifier = createVerifier(options);
  return (requiredScopes: readonly string[] = []): RequestHandler =>
    (req, res, next) => {
      const { method, originalUrl: path, headers, socket } = req;
      const request = {
        method,
        path,
        headers,
        requiredScopes,
        socket,
        remoteAddress: socket.remoteAddress,
      };
      void verifier.verify(request).then((verdict) => {
        if (!verdict.ok) return sendRefusal(res, verdict.refusal);
        if (verdict.auth) req.auth = verdict.auth;
        next();
      });
    };
}
