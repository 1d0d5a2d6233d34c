#!/usr/bin/env node
// The peer of the benchmark: one hop of the chain as a Node user would write it by hand with the
// best-known libraries: Fastify 5, fast-jwt (with its verified-token cache) and undici. It does
// what a hop of ours does: the same TLS certificates, keep-alive to the next hop, every
// request's bearer token verified (RS256, the key by kid, audience, issuer, expiry) and its
// scope checked (the X-Scope-Token's scopes when one is sent, as light-4j matches them; else the
// Authorization token's), the caller's Authorization passed on unchanged with the hop's own
// client-credentials token as X-Scope-Token, X-Correlation-Id passed on or generated, and the
// same messages. No log line per request (Fastify's logger off) and no metrics: the minimal peer.
//
// --full (the case `peer-full`): also everything else a shipped hop of ours does per request, no
// less. An audit line per verified request through pino (client_id, user_id, scope, correlation
// and trace id, as security.yml `logClientUserScope: true`) on stdout, which the runner pipes into
// a file as it does the services' output; pino's asynchronous destination (its documented
// fastest: 4 KB buffer, sync false). prom-client: a counter (endpoint, clientId, status class)
// and a histogram of response times (endpoint, clientId) per request, Node's process metrics, GET
// /metrics outside security and uncounted. X-Correlation-Id and X-Traceability-Id checked as
// ours read them (an id of at most 128 safe characters; else a new correlation id, and no
// traceability id), answered and passed on; a W3C traceparent read, its trace id kept (or one
// made) and a child sent downstream.
//
//   CERTS_DIR=certs node scripts/bench/peer-hop.mjs --letter A
//        [--downstream https://localhost:N/v1/data] [--token-url https://localhost:N] [--h2] [--full]
//
// --h2: Fastify serves HTTP/2 with HTTP/1.1 fallback (ALPN) and undici calls downstream over h2.
import crypto, { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import { pino } from 'pino';
import { Counter, Histogram, collectDefaultMetrics, register } from 'prom-client';
import { Pool, request } from 'undici';
import { readOptions } from './lib/args.mjs';
import { certsFromEnv } from './lib/env-certs.mjs';

const { values } = readOptions(
  {
    letter: { kind: 'text', choices: ['A', 'B', 'C', 'D'], default: 'D' },
    downstream: { kind: 'url' },
    'token-url': { kind: 'url' },
    h2: { kind: 'flag' },
    full: { kind: 'flag' },
  },
  'CERTS_DIR=certs node scripts/bench/peer-hop.mjs --letter A|B|C|D [--downstream URL] [--token-url URL] [--h2] [--full]',
);
const { letter, downstream, 'token-url': tokenUrl, h2, full } = values;
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

// --full: the audit log, the request metrics and the trace of every request.
const serviceId = `com.networknt.api${lower}-1.0.0`;
const audit = full
  ? pino(
      { base: { service: serviceId }, timestamp: pino.stdTimeFunctions.isoTime },
      pino.destination({ minLength: 4096, sync: false }),
    )
  : undefined;
const requests = full
  ? new Counter({
      name: 'requests_total',
      help: 'Total requests.',
      labelNames: ['endpoint', 'clientId', 'status'],
    })
  : undefined;
const responseTime = full
  ? new Histogram({
      name: 'response_time_seconds',
      help: 'Response time in seconds.',
      labelNames: ['endpoint', 'clientId'],
    })
  : undefined;
if (full) {
  collectDefaultMetrics();
  app.decorateRequest('trace', null);
  app.decorateRequest('caller', null);
}

/** An incoming id is passed on when it is at most 128 safe characters, as ours reads them. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const safeId = (value) => (typeof value === 'string' && SAFE_ID.test(value) ? value : undefined);

/** --full: correlation id, traceability id and W3C trace, answered at once (a refusal too). */
function readTrace(req, reply, done) {
  const { headers } = req;
  const correlationId = safeId(headers['x-correlation-id']) ?? randomUUID();
  const traceabilityId = safeId(headers['x-traceability-id']);
  const parent =
    typeof headers.traceparent === 'string' ? TRACEPARENT.exec(headers.traceparent) : null;
  const traceId = parent && parent[1] !== ZERO_TRACE ? parent[1] : randomBytes(16).toString('hex');
  req.trace = { correlationId, traceabilityId, traceId, flags: parent ? parent[2] : '00' };
  reply.header('X-Correlation-Id', correlationId);
  if (traceabilityId) reply.header('X-Traceability-Id', traceabilityId);
  done();
}

async function authenticate(req, reply) {
  const token = bearer(req.headers.authorization);
  if (!token) return refuse(reply, 401, 'ERR10002');
  let claims;
  try {
    claims = await verify(token);
  } catch {
    return refuse(reply, 401, 'ERR10000');
  }
  // As ours: a refused scope still counts under its verified client.
  if (full) req.caller = claims;
  const callerScopes = scopesOf(claims);
  let scopes = callerScopes;
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
  if (audit) {
    const { correlationId, traceId } = req.trace;
    audit.info(
      {
        client_id: claims.client_id,
        user_id: claims.user_id,
        scope: callerScopes.join(' '),
        correlationId,
        traceId,
      },
      'jwt verified',
    );
  }
}

/** --full: one count and one response time per answered request. */
function count(req, reply, done) {
  const endpoint = `${req.routeOptions.url}@${req.method.toLowerCase()}`;
  const clientId = req.caller?.client_id ?? 'unknown';
  requests.inc({ endpoint, clientId, status: `${Math.floor(reply.statusCode / 100)}xx` });
  responseTime.observe({ endpoint, clientId }, reply.elapsedTime / 1000);
  done();
}

/** The plain peer: X-Correlation-Id passed on or generated, nothing checked. */
function plainCorrelation(req, reply) {
  const correlationId = req.headers['x-correlation-id'] ?? randomUUID();
  reply.header('X-Correlation-Id', correlationId);
  return correlationId;
}

/** --full: the traceability id and a child of the W3C trace, to the next hop. */
function passTrace({ traceabilityId, traceId, flags }, headers) {
  if (traceabilityId) headers['x-traceability-id'] = traceabilityId;
  headers.traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}`;
}

app.get(
  '/v1/data',
  full ? { onRequest: [readTrace, authenticate], onResponse: count } : { onRequest: authenticate },
  async (req, reply) => {
    const correlationId = full ? req.trace.correlationId : plainCorrelation(req, reply);
    if (!pool) return own;
    const headers = {
      accept: 'application/json',
      authorization: req.headers.authorization,
      'x-scope-token': `Bearer ${ownToken}`,
      'x-correlation-id': correlationId,
    };
    if (full) passTrace(req.trace, headers);
    const { statusCode, body } = await pool.request({
      path: target.pathname,
      method: 'GET',
      headers,
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    const messages = await body.json();
    if (statusCode !== 200 || !Array.isArray(messages)) {
      return reply.code(502).send({ statusCode: 502, code: 'ERR20004' });
    }
    return [...messages, ...own];
  },
);

if (full) {
  // Outside security and not counted, as ours serves it.
  app.get('/metrics', async (req, reply) => {
    reply.type(register.contentType);
    return register.metrics();
  });
}

if (tokenUrl && downstream) await fetchOwnToken();
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
console.log(JSON.stringify({ protocol: 'https', port, msg: `listening on https port ${port}` }));
process.once('SIGTERM', () => {
  void app.close().then(async () => {
    await pool?.close();
    await tokenPool?.close();
    audit?.flush();
    process.exit(0);
  });
});
