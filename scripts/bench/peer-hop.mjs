#!/usr/bin/env node
// The peer of the benchmark: one hop of the chain as a Node user would write it by hand with the
// best-known libraries: Fastify 5, fast-jwt (with its verified-token cache) and undici. It does
// what a hop of ours does, no less: the same TLS certificates, keep-alive to the next hop, every
// request's bearer token verified (RS256, the key by kid, audience, issuer, expiry) and its
// scope checked (the X-Scope-Token's scopes when one is sent, as light-4j matches them; else the
// Authorization token's), the caller's Authorization passed on unchanged with the hop's own
// client-credentials token as X-Scope-Token, X-Correlation-Id passed on or generated, and the
// same messages. No log line per request (Fastify's logger off): what the issue's peer is.
//
//   CERTS_DIR=certs node scripts/bench/peer-hop.mjs --letter A
//        [--downstream https://localhost:N/v1/data] [--token-url https://localhost:N] [--h2]
//
// --h2: Fastify serves HTTP/2 with HTTP/1.1 fallback (ALPN) and undici calls downstream over h2.
import crypto, { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import { Pool, request } from 'undici';
import { readOptions } from './lib/args.mjs';
import { certsFromEnv } from './lib/env-certs.mjs';

const { values } = readOptions(
  {
    letter: { kind: 'text', choices: ['A', 'B', 'C', 'D'], default: 'D' },
    downstream: { kind: 'url' },
    'token-url': { kind: 'url' },
    h2: { kind: 'flag' },
  },
  'CERTS_DIR=certs node scripts/bench/peer-hop.mjs --letter A|B|C|D [--downstream URL] [--token-url URL] [--h2]',
);
const { letter, downstream, 'token-url': tokenUrl, h2 } = values;
const CERTS = certsFromEnv();
const lower = letter.toLowerCase();
const next = { a: 'b', b: 'c', c: 'd' }[lower];
const own = [`API ${letter}: Message 1`, `API ${letter}: Message 2`];
const required = new Set([`api_${lower}.r`, `api_${lower}.w`]);
const ca = fs.readFileSync(path.join(CERTS, 'ca.crt'));

// The keys by kid, as security.yml jwt.certificate maps them.
const keys = {
  100: new crypto.X509Certificate(fs.readFileSync(path.join(CERTS, 'primary.crt'))).publicKey,
  101: new crypto.X509Certificate(fs.readFileSync(path.join(CERTS, 'secondary.crt'))).publicKey,
};
const pem = Object.fromEntries(
  Object.entries(keys).map(([kid, k]) => [kid, k.export({ type: 'spki', format: 'pem' })]),
);
const verify = createVerifier({
  key: async ({ header }) => {
    const key = pem[header.kid];
    if (!key) throw new Error('unknown kid');
    return key;
  },
  algorithms: ['RS256'],
  allowedAud: 'urn:chain:api',
  allowedIss: 'https://localhost:6882',
  clockTolerance: 60_000,
  cache: 10_000,
});

const scopesOf = (claims) =>
  Array.isArray(claims.scope)
    ? claims.scope
    : typeof claims.scope === 'string'
      ? claims.scope.split(' ')
      : [];

const bearer = (header) => {
  if (typeof header !== 'string') return undefined;
  const [scheme, token, extra] = header.split(' ');
  return extra === undefined && token && /^bearer$/i.test(scheme) ? token : undefined;
};

const refuse = (reply, status, code) =>
  reply
    .code(status)
    .header('WWW-Authenticate', 'Bearer')
    .send({ statusCode: status, code, message: code, description: code });

/** The hop's own client-credentials token (light-oauth2 protocol), renewed before it expires. */
let ownToken;
async function fetchOwnToken() {
  const { statusCode, body } = await request(`${tokenUrl}/oauth2/token`, {
    method: 'POST',
    dispatcher: tokenPool,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`api-${lower}-client:api-${lower}-secret`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: `api_${next}.r api_${next}.w`,
    }).toString(),
  });
  const answer = await body.json();
  if (statusCode !== 200) throw new Error(`token server answered ${statusCode}`);
  ownToken = answer.access_token;
  setTimeout(() => void fetchOwnToken(), answer.expires_in * 800).unref();
}

const tokenPool = tokenUrl ? new Pool(tokenUrl, { connect: { ca } }) : undefined;
const target = downstream ? new URL(downstream) : undefined;
const pool = target
  ? new Pool(target.origin, { connect: { ca }, allowH2: h2, connections: 128 })
  : undefined;

const app = Fastify({
  logger: false,
  keepAliveTimeout: 72_000,
  ...(h2
    ? {
        http2: true,
        https: { allowHTTP1: true, key: readCert('server.key'), cert: readCert('server.crt') },
      }
    : { https: { key: readCert('server.key'), cert: readCert('server.crt') } }),
});

function readCert(name) {
  return fs.readFileSync(path.join(CERTS, name));
}

app.addHook('onRequest', async (req, reply) => {
  const token = bearer(req.headers.authorization);
  if (!token) return refuse(reply, 401, 'ERR10002');
  let claims;
  try {
    claims = await verify(token);
  } catch {
    return refuse(reply, 401, 'ERR10000');
  }
  let scopes = scopesOf(claims);
  const scopeHeader = req.headers['x-scope-token'];
  if (scopeHeader !== undefined) {
    const scopeToken = bearer(scopeHeader);
    if (!scopeToken) return refuse(reply, 401, 'ERR10003');
    try {
      scopes = scopesOf(await verify(scopeToken));
    } catch {
      return refuse(reply, 401, 'ERR10003');
    }
  }
  if (!scopes.some((s) => required.has(s))) return refuse(reply, 403, 'ERR10005');
});

app.get('/v1/data', async (req, reply) => {
  const correlationId = req.headers['x-correlation-id'] ?? randomUUID();
  reply.header('X-Correlation-Id', correlationId);
  if (!pool) return own;
  const { statusCode, body } = await pool.request({
    path: target.pathname,
    method: 'GET',
    headers: {
      accept: 'application/json',
      authorization: req.headers.authorization,
      'x-scope-token': `Bearer ${ownToken}`,
      'x-correlation-id': correlationId,
    },
    headersTimeout: 3000,
    bodyTimeout: 3000,
  });
  const messages = await body.json();
  if (statusCode !== 200 || !Array.isArray(messages)) {
    return reply.code(502).send({ statusCode: 502, code: 'ERR20004' });
  }
  return [...messages, ...own];
});

if (tokenUrl && downstream) await fetchOwnToken();
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
console.log(JSON.stringify({ protocol: 'https', port, msg: `listening on https port ${port}` }));
process.once('SIGTERM', () => {
  void app.close().then(async () => {
    await pool?.close();
    await tokenPool?.close();
    process.exit(0);
  });
});
