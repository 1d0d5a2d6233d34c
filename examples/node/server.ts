// A node:https service: GET /v1/pets needs a token holding read:pets (@chain/security) and calls
// DOWNSTREAM_URL with its own client-credentials token (@chain/oauth-client).
import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { StatusError, toStatusError } from '@chain/errors';
import { createOAuthClient } from '@chain/oauth-client';
import { createNodeVerifier } from '@chain/security/node';

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

const verify = createNodeVerifier({ config: 'config/security.yml' });
const client = createOAuthClient({
  config: 'config/client.yml',
  secrets: { clientCredentialsClientSecret: process.env.CLIENT_SECRET },
});
const downstreamUrl = process.env.DOWNSTREAM_URL ?? 'https://localhost:7442/v1/data';

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
  const { pathname } = new URL(req.url ?? '/', 'https://localhost');
  if (pathname !== '/v1/pets') throw new StatusError('ERR10007', [pathname]);
  const auth = await verify(req, res, ['read:pets']);
  if (auth === undefined) return undefined; // refused, and answered
  const header = req.headers['x-correlation-id'];
  const correlationId = typeof header === 'string' ? header : undefined;
  const downstream = await client.call(downstreamUrl, { correlationId });
  return { caller: auth?.clientId, scopes: auth?.scopes, downstream: downstream.body };
}

const send = (res: http.ServerResponse, status: number, body: unknown, headers = {}) =>
  res
    .writeHead(status, { ...headers, 'Content-Type': 'application/json' })
    .end(JSON.stringify(body));

const server = https.createServer(tls, (req, res) => {
  handle(req, res).then(
    (body) => body !== undefined && send(res, 200, body),
    // The catalogue's answer: ERR10007 (no such path), ERR20002 (no connection), ...
    (err: unknown) => {
      const error = toStatusError(err);
      send(res, error.statusCode, error.body, error.headers);
    },
  );
});
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST, () => {
  console.log(`listening on https://localhost:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  void client.close();
});
