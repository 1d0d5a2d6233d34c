import http from 'node:http';
import express from 'express';
import request from 'supertest';
import { devSigningKey, mintToken, CERTS } from '@chain/testkit';
import { contextOf, createExpressApp, createServiceApp } from '../src/index.js';
import { captureLogger, fixtureConfig, fixtureService, FRAMEWORKS } from './support.js';

const primary = devSigningKey('100');
const SECURITY_ON = `enableVerifyJwt: true
jwt:
  certificate:
    '100': ${CERTS}/primary.crt
logJwtToken: false
logClientUserScope: true
`;
const bearer = (scope: string[], clientId = 'client-1') =>
  `Bearer ${mintToken(primary, { clientId, scope })}`;

const ERR10007 = (path: string) => ({
  statusCode: 404,
  code: 'ERR10007',
  message: 'INVALID_REQUEST_PATH',
  description: `Request path ${path} cannot be found in the spec.`,
});

describe.each(FRAMEWORKS)('the service pipeline on the %s host', (framework) => {
  const open = () => fixtureService(fixtureConfig(framework));
  const secured = () => fixtureService(fixtureConfig(framework, { 'security.yml': SECURITY_ON }));

  it('is the host server.yml names', () => {
    const { app } = open();
    expect(app.framework).toBe(framework);
    expect(typeof (app.listener as { use?: unknown }).use === 'function').toBe(
      framework === 'express',
    );
  });

  it('answers a handler’s value as JSON, with the typed path parameters and the trace', async () => {
    const res = await request(open().app.listener)
      .get('/v1/items/42?x=1')
      .set('X-Correlation-Id', 'corr-1')
      .set('X-Traceability-Id', 'trace-1');
    expect({
      status: res.status,
      type: res.headers['content-type'],
      body: res.body,
      correlation: res.headers['x-correlation-id'],
      traceability: res.headers['x-traceability-id'],
    }).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: { id: 42, caller: null, correlationId: 'corr-1' },
      correlation: 'corr-1',
      traceability: 'trace-1',
    });
  });

  it('generates a correlation id when the caller sent none or an unsafe one', async () => {
    const app = open().app.listener;
    for (const sent of [undefined, 'has space', 'x'.repeat(129)]) {
      const req = request(app).get('/v1/open');
      const res = await (sent === undefined ? req : req.set('X-Correlation-Id', sent));
      expect(res.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['x-traceability-id']).toBeUndefined();
    }
  });

  describe('HEAD, OPTIONS, 405 and 404', () => {
    it('answers HEAD on a GET operation like GET, without the body', async () => {
      const app = open().app.listener;
      const get = await request(app).get('/v1/items/7');
      const head = await request(app).head('/v1/items/7');
      expect(head.status).toBe(200);
      expect(head.text).toBeUndefined();
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('answers HEAD /health and GET /health, no token needed even with security on', async () => {
      const app = secured().app.listener;
      const get = await request(app).get('/health');
      expect({ status: get.status, body: get.body }).toEqual({
        status: 200,
        body: { status: 'UP', serviceId: 'runtime-test' },
      });
      const head = await request(app).head('/health');
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
    });

    it('answers 405 ERR10008 with Allow for a method the path lacks', async () => {
      const res = await request(open().app.listener).put('/v1/items/7');
      expect({ status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
        status: 405,
        allow: 'GET, DELETE, HEAD, OPTIONS',
        body: {
          statusCode: 405,
          code: 'ERR10008',
          message: 'METHOD_NOT_ALLOWED',
          description: 'Request method PUT cannot be found in the path /v1/items/7.',
        },
      });
      const probe = await request(open().app.listener).post('/health');
      expect({ status: probe.status, allow: probe.headers.allow, code: probe.body.code }).toEqual({
        status: 405,
        allow: 'GET, HEAD, OPTIONS',
        code: 'ERR10008',
      });
    });

    it('answers OPTIONS with 204 and the Allow of the path, before security', async () => {
      const app = secured().app.listener;
      for (const [url, allow] of [
        ['/v1/items/7', 'GET, DELETE, HEAD, OPTIONS'],
        ['/v1/items', 'POST, OPTIONS'],
        ['/health', 'GET, HEAD, OPTIONS'],
      ]) {
        const res = await request(app).options(url);
        expect({ status: res.status, allow: res.headers.allow, text: res.text }).toEqual({
          status: 204,
          allow,
          text: '',
        });
      }
    });

    it('answers 404 ERR10007 for a path not in the spec, echoing at most 200 characters', async () => {
      const app = open().app.listener;
      const res = await request(app).get('/v2/nothing');
      expect({ status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
        status: 404,
        type: 'application/json',
        body: ERR10007('/v2/nothing'),
      });
      const long = `/${'a'.repeat(300)}`;
      expect((await request(app).get(long)).body).toEqual(ERR10007(`${long.slice(0, 200)}…`));
    });

    it('answers 404 ERR10007 for an operation of the spec that nothing handles', async () => {
      expect((await request(open().app.listener).get('/v1/unhandled')).body).toEqual(
        ERR10007('/v1/unhandled'),
      );
    });

    it('answers /metrics only when prometheus.yml enables it, and says so otherwise', async () => {
      const off = await request(open().app.listener).get('/metrics');
      expect({ status: off.status, type: off.headers['content-type'], body: off.body }).toEqual({
        status: 404,
        type: 'application/json',
        body: {
          statusCode: 404,
          code: 'ERR20017',
          message: 'ENDPOINT_NOT_ENABLED',
          description:
            'Request path /metrics is served by this service but not enabled: prometheus.yml enabled: true turns it on',
        },
      });
      const app = fixtureService(
        fixtureConfig(framework, { 'prometheus.yml': 'enabled: true\n' }),
      ).app;
      const res = await request(app.listener).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect((await request(app.listener).head('/metrics')).status).toBe(200);
      await app.metrics.stop();
    });
  });

  describe('order: routing, then security, then path parameters (light-4j)', () => {
    it('answers 401 to an unauthenticated request for a malformed path parameter', async () => {
      const res = await request(secured().app.listener).get('/v1/items/abc');
      expect({ status: res.status, code: res.body.code }).toEqual({
        status: 401,
        code: 'ERR10002',
      });
    });

    it('answers 400 ERR11004 to the same request with a good token', async () => {
      const res = await request(secured().app.listener)
        .get('/v1/items/abc')
        .set('Authorization', bearer(['items.r']));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        code: 'ERR11004',
        message: 'VALIDATOR_SCHEMA',
        description: 'Schema validation error: path parameter id must be an integer',
      });
    });

    it('answers 404 to an unauthenticated request for a path not in the spec', async () => {
      const res = await request(secured().app.listener).get('/v2/nothing');
      expect(res.status).toBe(404);
      expect(res.headers['www-authenticate']).toBeUndefined();
    });

    it('gives the handler the verified caller', async () => {
      const res = await request(secured().app.listener)
        .get('/v1/items/1')
        .set('Authorization', bearer(['items.r'], 'caller-9'));
      expect(res.body).toMatchObject({ id: 1, caller: 'caller-9' });
    });
  });

  describe('errors', () => {
    it('answers ERR10010 for an unexpected error, its detail only in the log (with the stack)', async () => {
      const service = open();
      const res = await request(service.app.listener)
        .get('/v1/fail')
        .set('X-Correlation-Id', 'corr-fail');
      expect(res.status).toBe(500);
      expect(res.text).toBe(
        '{"statusCode":500,"code":"ERR10010","message":"RUNTIME_EXCEPTION","description":"Unexpected runtime exception"}',
      );
      const line = service.log.lines().find((l) => l.msg === 'request failed');
      expect(line).toMatchObject({
        level: 50,
        code: 'ERR10010',
        method: 'GET',
        path: '/v1/fail',
        correlationId: 'corr-fail',
        err: { message: 'secret detail at /srv/app.js:1' },
      });
      expect((line!.err as { stack: string }).stack).toMatch(/at /);
    });

    it('answers a handler that answers itself as it did, and a body it reads', async () => {
      const app = open().app.listener;
      expect((await request(app).delete('/v1/items/3')).status).toBe(204);
      const posted = await request(app).post('/v1/items').type('text').send('hello');
      expect(posted.body).toEqual({ received: 'hello' });
      const big = await request(app).post('/v1/items').type('text').send('x'.repeat(65));
      expect({ status: big.status, body: big.body, connection: big.headers.connection }).toEqual({
        status: 413,
        body: {
          statusCode: 413,
          code: 'ERR10068',
          message: 'PAYLOAD_TOO_LARGE',
          description: 'The request body has exceeded the set max size.',
        },
        connection: 'close',
      });
    });
  });

  describe('metrics', () => {
    it('counts spec and security refusals under their endpoint and client, and not the probes', async () => {
      const service = fixtureService(
        fixtureConfig(framework, {
          'security.yml': SECURITY_ON,
          'prometheus.yml': 'enabled: true\n',
        }),
      );
      const app = service.app.listener;
      await request(app)
        .get('/v1/items/1')
        .set('Authorization', bearer(['items.r']));
      await request(app)
        .get('/v1/items/1')
        .set('Authorization', bearer(['other']));
      await request(app).get('/v1/items/1');
      await request(app).get('/nowhere');
      await request(app).get('/health');
      const text = (await request(app).get('/metrics')).text;
      const samples = text.split('\n').filter((l) => l.startsWith('requests_total{'));
      expect(samples.sort()).toEqual([
        'requests_total{endpoint="/v1/items/{id}@get",clientId="client-1"} 2',
        'requests_total{endpoint="/v1/items/{id}@get",clientId="unknown"} 1',
        'requests_total{endpoint="unknown",clientId="unknown"} 1',
      ]);
      await service.app.metrics.stop();
    });
  });

  describe('enableMockJwt', () => {
    const mock = () =>
      fixtureService(
        fixtureConfig(framework, {
          'security.yml': `${SECURITY_ON}enableMockJwt: true\n`,
        }),
      ).app.listener;

    it('issues a token at POST /oauth2/token that the service accepts', async () => {
      const app = mock();
      const issued = await request(app)
        .post('/oauth2/token')
        .auth('mock-caller', 'x')
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'items.r', user_id: 'u1' });
      expect(issued.status).toBe(200);
      expect(issued.headers['cache-control']).toBe('no-store');
      expect(issued.body).toMatchObject({ token_type: 'bearer', scope: 'items.r' });
      const res = await request(app)
        .get('/v1/items/5')
        .set('Authorization', `Bearer ${issued.body.access_token}`);
      expect(res.body).toMatchObject({ id: 5, caller: 'mock-caller' });
    });

    it('reads no form from another content type, and refuses a body over 4 KB', async () => {
      const app = mock();
      const json = await request(app).post('/oauth2/token').send({ scope: 'items.r' });
      expect(json.status).toBe(200);
      expect(json.body.scope).toBeUndefined();
      const big = await request(app)
        .post('/oauth2/token')
        .type('form')
        .send({ scope: 'x'.repeat(5000) });
      expect({ status: big.status, code: big.body.code }).toEqual({
        status: 413,
        code: 'ERR10068',
      });
    });
  });

  it('refuses at start a handler for a route that is not an operation of the spec', () => {
    expect(() =>
      createServiceApp({
        config: fixtureConfig(framework),
        logger: captureLogger().logger,
        routes: (routes) => routes.get('/v1/items/:id', () => 'x'),
      }),
    ).toThrow(
      /^Config error in .*openapi\.yaml: the service handles GET \/v1\/items\/:id, which is not an operation of the spec$/,
    );
  });
});

describe('the Express host, extended by the service', () => {
  const extended = () =>
    fixtureService(fixtureConfig('express', { 'security.yml': SECURITY_ON }), {
      beforeRouting: (app) => {
        app.use((req, res, next) => {
          res.setHeader('X-Frame-Options', 'DENY');
          // A CORS preflight answered before routing and security.
          if (req.method === 'OPTIONS' && req.headers.origin) {
            res.setHeader('Access-Control-Allow-Origin', req.headers.origin);
            res.status(204).end();
            return;
          }
          next();
        });
        app.use(express.json({ limit: '1kb' }));
      },
      afterSecurity: (app) => {
        app.get('/v1/unhandled', (req, res) => {
          const { caller, operation } = contextOf(req);
          res.json({ by: 'express', caller: caller?.clientId, endpoint: operation?.endpoint });
        });
      },
    });

  it('runs the service’s middleware on every answer, errors included', async () => {
    const app = extended().app.listener;
    expect((await request(app).get('/nowhere')).headers['x-frame-options']).toBe('DENY');
    expect((await request(app).get('/v1/items/1')).headers['x-frame-options']).toBe('DENY');
  });

  it('lets the service’s middleware answer a preflight before routing and security', async () => {
    const res = await request(extended().app.listener)
      .options('/v1/items/1')
      .set('Origin', 'https://ui.example');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://ui.example');
  });

  it('renders an error of the service’s middleware as a catalogue body', async () => {
    const res = await request(extended().app.listener)
      .post('/v1/items')
      .set('Content-Type', 'application/json')
      .set('Authorization', bearer(['items.w']))
      .send('{not json');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      code: 'ERR20007',
      message: 'MALFORMED_REQUEST',
      description: 'The request cannot be parsed',
    });
  });

  it('reaches the service’s Express routes only after security, with the typed context', async () => {
    const app = extended().app.listener;
    expect((await request(app).get('/v1/unhandled')).status).toBe(401);
    const res = await request(app).get('/v1/unhandled').set('Authorization', bearer([]));
    expect(res.body).toEqual({
      by: 'express',
      caller: 'client-1',
      endpoint: '/v1/unhandled@get',
    });
  });

  it('mounts inside an application of the service’s own (createExpressApp)', async () => {
    const outer = express();
    outer.use(
      '/chain',
      createExpressApp({
        config: fixtureConfig('native'),
        logger: captureLogger().logger,
        routes: (routes) => routes.get('/v1/open', () => ['open']),
      }),
    );
    expect((await request(outer).get('/chain/v1/open')).body).toEqual(['open']);
    expect((await request(outer).get('/chain/v1/nothing')).body).toEqual(ERR10007('/v1/nothing'));
  });

  it('says so when the context of a foreign request is asked for', () => {
    expect(() => contextOf(new http.IncomingMessage(null as never))).toThrow(TypeError);
  });
});
