import request from 'supertest';
import { CERTS, startRedis, waitFor, type Redis } from '@chain/testkit';
import { captureLogger, fixtureConfig, fixtureService, FRAMEWORKS } from '../support.js';
import type { ServiceApp } from '../../src/index.js';

// limit.yml in the request pipeline, in process on both hosts (test/e2e/limits.test.ts runs
// the same through real processes): the rate limit before security (key server, address),
// its headers and its 503 form, and the counters on a real redis-server.

const RATE_LIMITED = {
  statusCode: 429,
  code: 'ERR10088',
  message: 'RATE_LIMIT_EXCEEDED',
  description: 'Rate limit exceeded.',
};

const appWith = (framework: (typeof FRAMEWORKS)[number], limit: string) =>
  fixtureService(fixtureConfig(framework, { 'limit.yml': limit })).app;

describe.each(FRAMEWORKS)('limit.yml on the %s host', (framework) => {
  it('key server, 2/h: two requests pass with the RateLimit headers, the third is 429 ERR10088 with Retry-After', async () => {
    const app = appWith(
      framework,
      'enabled: true\nkey: server\nrateLimit: 2/h\nheadersAlwaysSet: true\n',
    );
    const first = await request(app.listener).get('/v1/open');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await request(app.listener).get('/v1/open')).status).toBe(200);
    const over = await request(app.listener).get('/v1/open');
    expect(over.status).toBe(429);
    expect(over.body).toEqual(RATE_LIMITED);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    // /health is not limited.
    expect((await request(app.listener).get('/health')).status).toBe(200);
  });

  it('key address with its own quota by path prefix; errorCode 503 answers ERR20015', async () => {
    const app = appWith(
      framework,
      'enabled: true\nkey: address\nrateLimit: 100/h\nerrorCode: 503\naddress:\n  "::ffff:127.0.0.1":\n    /v1/open: 1/h\n  "127.0.0.1":\n    /v1/open: 1/h\n  "::1":\n    /v1/open: 1/h\n',
    );
    expect((await request(app.listener).get('/v1/open')).status).toBe(200);
    const over = await request(app.listener).get('/v1/open');
    expect(over.status).toBe(503);
    expect(over.body.code).toBe('ERR20015');
    expect(over.headers['retry-after']).toBeDefined();
    // Another path of the same address falls under rateLimit.
    expect((await request(app.listener).get('/v1/items/1')).status).toBe(200);
  });
});

describe('limit.yml redis: the counters on a real redis-server', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  /** limit.yml: 2 an hour for the whole server, counted on the Redis at `url`. */
  const limitOn = (url: string) =>
    `enabled: true\nkey: server\nrateLimit: 2/h\nheadersAlwaysSet: true\nredis: ${url}\n`;
  /**
   * Until the connection is up a request is not counted (fail open, no RateLimit headers): the
   * first one counted is the first with them.
   */
  const counted = (app: ServiceApp) =>
    waitFor(
      'a request counted on Redis',
      async () => {
        const res = await request(app.listener).get('/v1/open');
        expect(res.status).toBe(200);
        return res.headers['ratelimit-limit'] === '2' ? res : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );

  it('2/h holds across two apps sharing the server; with Redis gone, requests pass (fail open)', async () => {
    const limit = limitOn(redis.url);
    const log = captureLogger();
    const one = fixtureService(fixtureConfig('native', { 'limit.yml': limit }), undefined, log).app;
    const two = fixtureService(fixtureConfig('native', { 'limit.yml': limit })).app;
    await counted(one);
    const second = await request(two.listener).get('/v1/open');
    expect([second.status, second.headers['ratelimit-remaining']]).toEqual([200, '0']);
    const over = await request(one.listener).get('/v1/open');
    expect(over.status).toBe(429);
    expect(over.body).toEqual(RATE_LIMITED);
    await redis.stop();
    const open = await request(two.listener).get('/v1/open');
    expect(open.status).toBe(200);
  });

  it('counts again once Redis is back: one warning for the outage, one line when it answers', async () => {
    const own = await startRedis();
    const log = captureLogger();
    const limit = limitOn(own.url);
    const app = fixtureService(fixtureConfig('native', { 'limit.yml': limit }), undefined, log).app;
    const at = (message: RegExp) => log.lines().filter((l) => message.test(String(l.msg)));
    await counted(app);
    await own.stop();
    for (let i = 0; i < 3; i++) {
      expect((await request(app.listener).get('/v1/open')).status).toBe(200);
    }
    await waitFor('the outage said', async () => at(/cannot be reached/).length > 0 || undefined);
    const back = await startRedis({ port: own.port });
    try {
      // Back empty (nothing saved): the first request counted again leaves one of the two.
      const first = await counted(app);
      expect(first.headers['ratelimit-remaining']).toBe('1');
      expect((await request(app.listener).get('/v1/open')).status).toBe(200);
      const over = await request(app.listener).get('/v1/open');
      expect([over.status, over.body]).toEqual([429, RATE_LIMITED]);
      expect(at(/cannot be reached/).length).toBe(1);
      expect(at(/answers again/).map((l) => [l.level, l.msg])).toEqual([
        [30, `Redis at 127.0.0.1:${own.port} answers again`],
      ]);
    } finally {
      await back.stop();
    }
  });

  describe('rediss://: TLS with client.yml tls (a redis-server that asks for client certificates)', () => {
    let secure: Redis;
    beforeAll(async () => {
      secure = await startRedis({ tls: { clientCertificates: true } });
    });
    afterAll(() => secure?.stop());

    const appWithClient = (client: string) => {
      const log = captureLogger();
      const files = { 'limit.yml': limitOn(secure.url), 'client.yml': client };
      return { app: fixtureService(fixtureConfig('native', files), undefined, log).app, log };
    };
    const refused = async (client: string, reason: RegExp) => {
      const { app, log } = appWithClient(client);
      const warned = await waitFor('the Redis link refused', async () =>
        log.lines().find((l) => /cannot be reached/.test(String(l.msg))),
      );
      expect(warned.reason).toMatch(reason);
      // Never counted (fail open): no RateLimit headers, three requests past the 2/h.
      for (let i = 0; i < 3; i++) {
        const res = await request(app.listener).get('/v1/open');
        expect([res.status, res.headers['ratelimit-limit']]).toEqual([200, undefined]);
      }
    };

    it("counts with client.yml's trust store (the chain's CA) and its key store's certificate", async () => {
      const { app } = appWithClient(
        `tls:\n  trustStore: ${CERTS}/ca.crt\n  loadKeyStore: true\n  keyStore: ${CERTS}/client.pem\n`,
      );
      expect((await counted(app)).headers['ratelimit-remaining']).toBe('1');
      expect((await request(app.listener).get('/v1/open')).status).toBe(200);
      expect((await request(app.listener).get('/v1/open')).status).toBe(429);
    });

    it('without the key store the server refuses the handshake: said, nothing counted', async () => {
      await refused(`tls:\n  trustStore: ${CERTS}/ca.crt\n`, /./);
    });

    it("without the chain's CA the server's certificate is not trusted: said, nothing counted", async () => {
      await refused(
        `tls:\n  loadTrustStore: false\n  loadKeyStore: true\n  keyStore: ${CERTS}/client.pem\n`,
        /certificate/i,
      );
    });
  });
});
