import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { AuthInfo } from './authorizer.js';
import { createVerifier, type VerifierOptions } from './verifier.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; null on a path of `skipPathPrefixes`. */
    auth: AuthInfo | null;
  }
  interface FastifyContextConfig {
    /** One of them must be held; none: a valid token is enough. */
    scopes?: readonly string[];
  }
}

const plugin: FastifyPluginAsync<VerifierOptions> = async (fastify, options) => {
  const verifier = createVerifier(options);
  fastify.decorateRequest('auth', null);
  fastify.addHook('onRequest', async (request, reply) => {
    const verdict = await verifier.verify({
      method: request.method,
      path: request.url,
      headers: request.headers,
      requiredScopes: request.routeOptions.config.scopes ?? [],
      socket: request.raw.socket,
      remoteAddress: request.ip,
    });
    if (!verdict.ok) {
      const { status, headers, body } = verdict.refusal;
      // A Buffer: Fastify adds a charset to the type of a string.
      return reply.code(status).headers(headers).send(Buffer.from(body));
    }
    request.auth = verdict.auth ?? null;
  });
};

/** `fastify.register(fastifySecurity, options)`; a route's `{ config: { scopes: ['x'] } }`. */
export const fastifySecurity = fp(plugin, { fastify: '5.x', name: '@chain/security' });
export default fastifySecurity;
