import https from 'node:https';
import path from 'node:path';
import {
  CERTS,
  ROOT,
  SECURITY_ON,
  configDir,
  devSigningKey,
  dpopBound,
  dpopProof,
  createDpopKey,
  httpsRequest,
  mintToken,
  startRedis,
  startService,
  type Redis,
  type ServiceProcess,
} from '@chain/testkit';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const key = devSigningKey('100');
const token = (clientId: string, extra = {}) =>
  mintToken(key, { clientId, scope: ['read:pets'], claims: extra });
const bearer = (clientId: string) => ({ Authorization: `Bearer ${token(clientId)}` });
const server = (workers = 1) =>
  `serviceId: limits-e2e\nhttpsPort: 0\nip: 127.0.0.1\nworkers: ${workers}\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`;
const PROMETHEUS = 'enabled: true\nenableHotspot: false\n';

const RATE_LIMITED = {
  statusCode: 429,
  code: 'ERR10088',
  message: 'RATE_LIMIT_EXCEEDED',
  description: 'Rate limit exceeded.',
};
const OVERLOADED = {
  statusCode: 503,
  code: 'ERR20015',
  message: 'SERVICE_OVERLOADED',
  description: 'The service is overloaded; retry later',
};

/** A fresh connection from `from` (any 127/8 address reaches a loopback listener). */
const get = (p: ServiceProcess, headers: Record<string, string> = {}, from?: string, id = 1) =>
  httpsRequest(`https://127.0.0.1:${p.port}/v2/pet/${id}`, {
    headers,
    agent: from ? new https.Agent({ localAddress: from }) : false,
  });
const refusedCount = async (p: ServiceProcess, reason: string) => {
  const { text } = await httpsRequest(`https://127.0.0.1:${p.port}/metrics`);
  const line = text.split('\n').find((l) => l.startsWith(`refused_total{reason="${reason}"}`));
  return Number(line?.split(' ').pop() ?? 0);
};

describe('limit.yml key: client (light-4j LimitHandler after the JWT handler)', () => {
  let pet: ServiceProcess;
  beforeAll(async () => {
    pet = await startService('petstore', {
      configDir: configDir({
        'server.yml': server(),
        'security.yml': SECURITY_ON,
        'prometheus.yml': PROMETHEUS,
        'limit.yml': [
          'enabled: true',
          'key: client',
          'rateLimit: 100/h',
          'headersAlwaysSet: true',
          'client:',
          '  busy-client: 2/h 1000/d',
          '',
        ].join('\n'),
      }),
    });
  });
  afterAll(() => pet?.stop());

  it('the third request of a client over its 2/h: 429 ERR10088 with Retry-After; another client passes', async () => {
    const first = await get(pet, bearer('busy-client'));
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    // Until the whole quota is free again: the one booked request, a half of the hour.
    expect(first.headers['ratelimit-reset']).toBe('1800');
    expect((await get(pet, bearer('busy-client'))).headers['ratelimit-remaining']).toBe('0');
    const refused = await get(pet, bearer('busy-client'));
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/json');
    expect(refused.body).toEqual(RATE_LIMITED);
    // One request every 30 minutes after the burst of two (GCRA).
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(1700);
    expect(retryAfter).toBeLessThanOrEqual(1800);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-reset']).toBe(String(retryAfter));

    const other = await get(pet, bearer('quiet-client'));
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-limit']).toBe('100');
    expect(other.headers['ratelimit-remaining']).toBe('99');
    expect(await refusedCount(pet, 'rate_limit')).toBe(1);
  });
});

describe('limit.yml key: address (before security: no token work when over)', () => {
  let pet: ServiceProcess;
  beforeAll(async () => {
    pet = await startService('petstore', {
      configDir: configDir({
        'server.yml': server(),
        'security.yml': SECURITY_ON,
        'prometheus.yml': PROMETHEUS,
        'limit.yml': [
          'enabled: true',
          'key: address',
          'rateLimit: 3/h',
          'address:',
          '  127.0.0.2: 1/h',
          '  127.0.0.4:',
          '    /v2/pet: 2/h',
          '',
        ].join('\n'),
      }),
    });
  });
  afterAll(() => pet?.stop());

  it('127.0.0.2 past its 1/h: 429 with Retry-After, even without a token; 127.0.0.3 has the default 3/h', async () => {
    expect((await get(pet, bearer('a'), '127.0.0.2')).status).toBe(200);
    const refused = await get(pet, {}, '127.0.0.2');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(RATE_LIMITED);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    // Not set on an answer within the limit unless headersAlwaysSet.
    const within = await get(pet, bearer('a'), '127.0.0.3');
    expect(within.status).toBe(200);
    expect(within.headers['ratelimit-limit']).toBeUndefined();
    expect((await get(pet, bearer('a'), '127.0.0.3')).status).toBe(200);
    expect((await get(pet, bearer('a'), '127.0.0.3')).status).toBe(200);
    expect((await get(pet, bearer('a'), '127.0.0.3')).status).toBe(429);
  });

  it('an address with quotas by path prefix: 2/h on /v2/pet', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(pet, bearer('a'), '127.0.0.4')).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await refusedCount(pet, 'rate_limit')).toBe(3);
  });

  it('/health is never limited', async () => {
    for (let i = 0; i < 3; i++) {
      const health = await httpsRequest(`https://127.0.0.1:${pet.port}/health`, {
        agent: new https.Agent({ localAddress: '127.0.0.2' }),
      });
      expect(health.status).toBe(200);
    }
  });
});

describe('load shedding (limit.yml overload)', () => {
  const stall = path.join(ROOT, 'test', 'fixtures', 'stall', 'index.mjs');

  it('a stalled event loop: 503 ERR20015 with Retry-After before any token work; /health 200', async () => {
    const svc = await startService('stall', {
      script: stall,
      configDir: configDir({
        'server.yml': server(),
        'security.yml': SECURITY_ON,
        'prometheus.yml': PROMETHEUS,
        'limit.yml': 'overload:\n  maxEventLoopDelay: 200\n  retryAfter: 7\n',
      }),
    });
    try {
      // Connections made before the stall: their requests wait in the socket while it lasts.
      const warm = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const health = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const url = `https://127.0.0.1:${svc.port}`;
      expect((await get(svc, {}, undefined)).status).toBe(401);
      expect((await httpsRequest(`${url}/v2/pet/1`, { agent: warm })).status).toBe(401);
      expect((await httpsRequest(`${url}/health`, { agent: health })).status).toBe(200);

      const stalled = get(svc, bearer('a'), undefined, 1500);
      await svc.waitForLine((l) => l === 'stalling 1500');
      const [shed, alive] = await Promise.all([
        httpsRequest(`${url}/v2/pet/1`, { agent: warm }),
        httpsRequest(`${url}/health`, { agent: health }),
      ]);
      expect((await stalled).status).toBe(200);
      expect(shed.status).toBe(503);
      expect(shed.body).toEqual(OVERLOADED);
      expect(shed.headers['retry-after']).toBe('7');
      expect(alive.status).toBe(200);
      expect(alive.body).toEqual({ status: 'UP', serviceId: 'limits-e2e' });
      await svc.waitForLine((l) => l.includes('"msg":"overloaded, shedding requests: event loop'));
      await svc.waitForLine((l) => l.includes('"msg":"no longer overloaded"'));
      expect((await httpsRequest(`${url}/v2/pet/1`, { agent: warm })).status).toBe(401);
      expect(await refusedCount(svc, 'overload')).toBe(1);
      warm.destroy();
      health.destroy();
    } finally {
      await svc.stop();
    }
  });

  it('past maxRssBytes: 503 once the sample sees it; /health 200', async () => {
    const pet = await startService('petstore', {
      configDir: configDir({
        'server.yml': server(),
        'limit.yml': 'overload:\n  maxRssBytes: 1\n  sampleInterval: 50\n',
      }),
    });
    try {
      await pet.waitForLine((l) => l.includes('"msg":"overloaded, shedding requests: rss'));
      const shed = await get(pet);
      expect(shed.status).toBe(503);
      expect(shed.body).toEqual(OVERLOADED);
      expect(shed.headers['retry-after']).toBe('10');
      expect((await httpsRequest(`https://127.0.0.1:${pet.port}/health`)).status).toBe(200);
    } finally {
      await pet.stop();
    }
  });
});

describe('shared through Redis (limit.yml and security.yml redis)', () => {
  let redis: Redis;
  const ORIGIN = 'https://pets.example';
  const dpopKey = createDpopKey();
  const shared = (redisUrl: string) => ({
    'security.yml': `${SECURITY_ON}dpop:\n  origins: [${ORIGIN}]\n  redis: ${redisUrl}\n`,
    'limit.yml': `enabled: true\nkey: client\nrateLimit: 3/h\nredis: ${redisUrl}\n`,
  });
  const bound = (clientId: string) => token(clientId, dpopBound(dpopKey));
  const proofFor = (access: string) =>
    dpopProof(dpopKey, { htm: 'GET', htu: `${ORIGIN}/v2/pet/1`, accessToken: access });
  const dpop = (access: string, proof: string) => ({
    Authorization: `DPoP ${access}`,
    DPoP: proof,
  });

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('two replicas: a proof replayed to the other is refused (ERR20014); a client limit holds across both', async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() =>
        startService('petstore', {
          configDir: configDir({ 'server.yml': server(), ...shared(redis.url) }),
        }),
      ),
    );
    try {
      const access = bound('replicas-client');
      const proof = proofFor(access);
      expect((await get(a, dpop(access, proof))).status).toBe(200);
      const replayed = await get(b, dpop(access, proof));
      expect(replayed.status).toBe(401);
      expect((replayed.body as { code: string }).code).toBe('ERR20014');

      // 3/h for the client across both: one more on each side of the first.
      expect((await get(b, dpop(access, proofFor(access)))).status).toBe(200);
      expect((await get(a, dpop(access, proofFor(access)))).status).toBe(200);
      const over = await get(b, dpop(access, proofFor(access)));
      expect(over.status).toBe(429);
      expect(over.body).toEqual(RATE_LIMITED);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(1100);
      expect((await get(a, dpop(access, proofFor(access)))).status).toBe(429);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('server.yml workers: 2: the limit is the same across both workers', async () => {
    const pet = await startService('petstore', {
      configDir: configDir({ 'server.yml': server(2), ...shared(redis.url) }),
    });
    try {
      const statuses: number[] = [];
      // Fresh connections, which the cluster spreads over both workers.
      for (let i = 0; i < 8; i++) statuses.push((await get(pet, bearer('workers-client'))).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
      const pids = new Set(
        pet.lines.filter((l) => /"msg":"worker \d+ serving"/.test(l)).map((l) => JSON.parse(l).pid),
      );
      expect(pids.size).toBe(2);
      const access = bound('workers-dpop');
      const proof = proofFor(access);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await get(pet, dpop(access, proof))).status);
      expect(answers).toEqual([200, 401, 401, 401]);
    } finally {
      await pet.stop();
    }
  });

  it('Redis unreachable: said at start; rate limits fail open, DPoP proofs are refused with 503 ERR20016', async () => {
    const gone = await startRedis();
    await gone.stop();
    const pet = await startService('petstore', {
      configDir: configDir({ 'server.yml': server(), ...shared(gone.url) }),
    });
    try {
      await pet.waitForLine((l) =>
        l.includes(`"msg":"Redis at 127.0.0.1:${gone.port} cannot be reached`),
      );
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(pet, bearer('open-client'))).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const access = bound('closed-client');
      const refused = await get(pet, dpop(access, proofFor(access)));
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        statusCode: 503,
        code: 'ERR20016',
        message: 'SHARED_STORE_UNAVAILABLE',
        description: 'The DPoP replay cache (Redis) could not be reached',
      });
    } finally {
      await pet.stop();
    }
  });
});
