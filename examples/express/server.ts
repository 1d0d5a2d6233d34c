// An Express service: GET /v1/pets needs a token holding read:pets (@chain/security) and calls
// DOWNSTREAM_URL with its own client-credentials token (@chain/oauth-client).
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { toStatusError } from '@chain/errors';
import { createOAuthClient } from '@chain/oauth-client';
import { createExpressVerifier } from '@chain/security/express';

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

const requireScopes = createExpressVerifier({ config: 'config/security.yml' });
const client = createOAuthClient({
  config: 'config/client.yml',
  secrets: { clientCredentialsClientSecret: process.env.CLIENT_SECRET },
});
const downstreamUrl = process.env.DOWNSTREAM_URL ?? 'https://localhost:7442/v1/data';

const app = express();
app.get('/v1/pets', requireScopes(['read:pets']), async (req, res) => {
  try {
    const correlationId = req.get('X-Correlation-Id');
    const downstream = await client.call(downstreamUrl, { correlationId });
    res.json({ caller: req.auth?.clientId, scopes: req.auth?.scopes, downstream: downstream.body });
  } catch (err) {
    // The catalogue's answer: ERR20002 (no connection), ERR10009 (no token), ...
    const error = toStatusError(err);
    res.status(error.statusCode).set(error.headers).json(error.body);
  }
});

const server = https.createServer(tls, app);
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST, () => {
  console.log(`listening on https://localhost:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  void client.close();
});
