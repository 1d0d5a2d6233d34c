import path from 'node:path';
import request from 'supertest';
import { StatusError } from '@chain/errors';
import { createServiceApp, type ReadinessCheck } from '../src/index.js';
import { createReadiness } from '../src/readiness.js';
import { CERTS } from '@chain/testkit';
import { captureLogger, deferred, fixtureConfig, FRAMEWORKS } from './support.js';

// GET /ready, the Kubernetes readiness probe: 200 while every readiness check of the service
// holds, 503 naming the failed ones otherwise; never behind a token, never a secret in it.

const SECURITY_ON = `enableVerifyJwt: true
jwt:
  certificate:
    '100': ${path.join(CERTS, 'primary.crt')}
`;
const UP = { status: 'UP', serviceId: 'runtime-test' };
const NOT_AVAILABLE = new StatusError('ERR10009');

describe.each(FRAMEWORKS)('GET /ready on the %s host', (framework) => {
  const app = (readiness?: ReadinessCheck[], log = captureLogger()) =>
    createServiceApp({
      config: fixtureConfig(framework, { 'security.yml': SECURITY_ON }),
      logger: log.logger,
      routes: () => undefined,
      readiness,
    }).listener;

  it('answers 200 UP without checks, with security on and no token; HEAD and OPTIONS too', async () => {
    const listener = app();
    const get = await request(listener).get('/ready');
    expect({ status: get.status, type: get.headers['content-type'], body: get.body }).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: UP,
    });
    expect(get.headers['cache-control']).toBe('no-store');
    const head = await request(listener).head('/ready');
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: undefined });
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    const options = await request(listener).options('/ready');
    expect({ status: options.status, allow: options.headers.allow }).toEqual({
      status: 204,
      allow: 'GET, HEAD, OPTIONS',
    });
    const post = await request(listener).post('/ready');
    expect({ status: post.status, allow: post.headers.allow, code: post.body.code }).toEqual({
      status: 405,
      allow: 'GET, HEAD, OPTIONS',
      code: 'ERR10008',
    });
  });

  it('answers 503 DOWN naming the failed check with its catalogue code, and 200 once it holds', async () => {
    let holds = false;
    const log = captureLogger();
    const listener = app(
      [
        {
          name: 'token',
          check: () => (holds ? Promise.resolve('t') : Promise.reject(NOT_AVAILABLE)),
        },
        { name: 'other', check: () => Promise.resolve() },
      ],
      log,
    );
    const down = await request(listener).get('/ready');
    expect({ status: down.status, body: down.body }).toEqual({
      status: 503,
      body: {
        status: 'DOWN',
        serviceId: 'runtime-test',
        checks: [
          {
            name: 'token',
            status: 'DOWN',
            reason: 'ERR10009 CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
          },
          { name: 'other', status: 'UP' },
        ],
      },
    });
    // /health stays 200: liveness does not follow readiness.
    expect((await request(listener).get('/health')).status).toBe(200);
    await request(listener).get('/ready');
    holds = true;
    const up = await request(listener).get('/ready');
    expect({ status: up.status, body: up.body }).toEqual({ status: 200, body: UP });
    // One line per change of state, not per probe.
    const lines = log.lines().filter((l) => /ready/.test(String(l.msg)));
    expect(lines.map((l) => [l.level, l.msg, l.check])).toEqual([
      [40, 'not ready: token ERR10009 CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE', 'token'],
      [30, 'ready', undefined],
    ]);
  });

  it('says only "failed" for an error that is not a catalogue error (its message may hold a secret)', async () => {
    const log = captureLogger();
    const listener = app(
      [{ name: 'token', check: () => Promise.reject(new Error('client_secret=s3cr3t refused')) }],
      log,
    );
    const down = await request(listener).get('/ready');
    expect(down.status).toBe(503);
    expect(down.body.checks).toEqual([{ name: 'token', status: 'DOWN', reason: 'failed' }]);
    expect(down.text).not.toContain('s3cr3t');
  });
});

describe('createReadiness', () => {
  it('counts a check that does not settle within the time-out as failed, and answers meanwhile', async () => {
    const never = deferred<void>();
    const readiness = createReadiness(
      'svc',
      [{ name: 'slow', check: () => never.promise }],
      captureLogger().logger,
      50,
    );
    const started = Date.now();
    const state = await readiness();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(state.ready).toBe(false);
    expect(JSON.parse(state.body)).toEqual({
      status: 'DOWN',
      serviceId: 'svc',
      checks: [{ name: 'slow', status: 'DOWN', reason: 'no answer within 50 ms' }],
    });
    never.resolve();
  });

  it('asks every check on every call (a check must be cheap when all is well)', async () => {
    let calls = 0;
    const readiness = createReadiness(
      'svc',
      [{ name: 'counted', check: async () => void calls++ }],
      captureLogger().logger,
    );
    await readiness();
    await readiness();
    expect(calls).toBe(2);
  });
});
