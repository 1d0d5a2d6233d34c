// A Fastify service: GET /v1/pets needs a token holding read:pets (@chain/security) and calls
// DOWNSTREAM_URL with its own client-credentials token (@chain/oauth-client).
import fs from 'node:fs';
import type https from 'node:https';
import path from 'node:path';
import Fastify from 'fastify';
import { toStatusError } from '@chain/errors';
import { createOAuthClient } from '@chain/oauth-client';
import fastifySecurity from '@chain/security/fastify';

const certs = process.env.CERTS_DIR ?? '../../certs';
const tls: https.ServerOptions = {
  key: fs.readFileSync(path.join(certs, 'server.key')),
  cert: fs.readFileSync(path.join(certs, 'server.crt')),
};
if (process.env.CLIENT_CA) {
  // Two-way TLS: a client certificate is asked for (and checked) so that a token bound to one
  // (RFC 8705 cnf x5t#S256) can be proven; a request without one still comes in.
  tls.ca = fs.readFileSync(process.env.CLIENT_CA);
  tls.requestCert = true;
  tls.rejectUnauthorized = false;
}

const client = createOAuthClient({
  config: 'config/client.yml',
  secrets: { clientCredentialsClientSecret: process.env.CLIENT_SECRET },
});
const downstreamUrl = process.env.DOWNSTREAM_URL ?? 'https://localhost:7442/v1/data';

const app = Fastify({ https: tls });
await app.register(fastifySecurity, { config: 'config/security.yml' });
app.get('/v1/pets', { config: { scopes: ['read:pets'] } }, async (request, reply) => {
  try {
    const header = request.headers['x-correlation-id'];
    const correlationId = typeof header === 'string' ? header : undefined;
    const downstream = await client.call(downstreamUrl, { correlationId });
    const { auth } = request;
    return { caller: auth?.clientId, scopes: auth?.scopes, downstream: downstream.body };
  } catch (err) {
    // The catalogue's answer: ERR20002 (no connection), ERR10009 (no token), ...
    const error = toStatusError(err);
    return reply.code(error.statusCode).headers(error.headers).send(error.body);
  }
});
app.addHook('onClose', () => client.close());

const port = Number(process.env.PORT ?? 8080);
const address = await app.listen({ port, host: process.env.HOST ?? '::' });
console.log(`listening on https://localhost:${new URL(address).port}`);
process.once('SIGTERM', () => void app.close());
