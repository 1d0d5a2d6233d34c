import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { createSigningKey, mintToken, writeCertificate } from '@chain/testkit';
import { createSecurityHandlers, createSecurityMiddleware } from '../src/express-adapter';
import { toStatusError } from '../src/status-error';
import type { SecurityConfig } from '../src/security-config';
import { securityConfig } from './helpers';

const primary = createSigningKey('100');
const certificate = { '100': writeCertificate(primary) };

function appWith(config: SecurityConfig, logs: object[] = []) {
  const { middleware, mockTokenRouter } = createSecurityHandlers({
    config,
    requiredScopes: () => ['read:pets'],
    logger: { info: (record) => logs.push(record) },
    env: {},
  });
  const app = express();
  app.use((_req, res, next) => {
    res.locals.trace = { correlationId: 'cid-1' };
    next();
  });
  if (mockTokenRouter) app.use(mockTokenRouter);
  app.use(middleware);
  app.get('/pets', (_req, res) => res.json(res.locals.auth));
  const render: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = toStatusError(err);
    const caller = (res.locals.auth as { clientId?: string } | undefined)?.clientId;
    if (caller) res.set('X-Test-Caller', caller);
    res.status(e.statusCode).set(e.headers).json(e.body);
  };
  app.use(render);
  return app;
}

describe('createSecurityHandlers', () => {
  it('passes every request when enableVerifyJwt is false', async () => {
    const app = appWith(securityConfig(certificate, { enableVerifyJwt: false }));
    await request(app).get('/pets').expect(200);
  });

  it('puts the verified caller in res.locals.auth', async () => {
    const token = mintToken(primary, { clientId: 'c1', userId: 'u1', scope: ['read:pets'] });
    const res = await request(appWith(securityConfig(certificate)))
      .get('/pets')
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(res.body).toMatchObject({ clientId: 'c1', userId: 'u1', scopes: ['read:pets'] });
  });

  it('keeps the verified caller of a scope mismatch in res.locals.auth', async () => {
    const token = mintToken(primary, { clientId: 'c2', scope: ['write:pets'] });
    const res = await request(appWith(securityConfig(certificate)))
      .get('/pets')
      .set('Authorization', `Bearer ${token}`)
      .expect(403);
    expect(res.body.code).toBe('ERR10005');
    expect(res.headers['x-test-caller']).toBe('c2');
  });

  it('leaves res.locals.auth empty for a refused token', async () => {
    const res = await request(appWith(securityConfig(certificate)))
      .get('/pets')
      .set('Authorization', 'Bearer a.b.c')
      .expect(401);
    expect(res.headers['x-test-caller']).toBeUndefined();
  });

  it('answers the catalogue error through next(err)', async () => {
    const res = await request(appWith(securityConfig(certificate)))
      .get('/pets')
      .expect(401);
    expect(res.body.code).toBe('ERR10002');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  describe('audit log', () => {
    const token = mintToken(primary, { clientId: 'c1', userId: 'u1', scope: ['read:pets'] });
    const run = async (overrides: Partial<SecurityConfig>, authorization = `Bearer ${token}`) => {
      const logs: object[] = [];
      await request(appWith(securityConfig(certificate, overrides), logs))
        .get('/pets')
        .set('Authorization', authorization);
      return logs;
    };

    it('logs the whole token with logJwtToken', async () => {
      expect(await run({ logJwtToken: true, logClientUserScope: false })).toEqual([
        { jwt: token, correlationId: 'cid-1' },
      ]);
    });

    it('logs only client_id, user_id and scope with logClientUserScope', async () => {
      expect(await run({ logJwtToken: false, logClientUserScope: true })).toEqual([
        { client_id: 'c1', user_id: 'u1', scope: 'read:pets', correlationId: 'cid-1' },
      ]);
    });

    it('logs nothing when both are off', async () => {
      expect(await run({ logJwtToken: false, logClientUserScope: false })).toEqual([]);
    });

    it('never logs a refused token', async () => {
      const other = mintToken(createSigningKey('100'), { scope: ['read:pets'] });
      expect(await run({ logJwtToken: true, logClientUserScope: true }, `Bearer ${other}`)).toEqual(
        [],
      );
    });
  });

  describe('enableMockJwt', () => {
    const config = securityConfig(certificate, { enableMockJwt: true });

    it('issues tokens the service itself accepts, with the scopes asked for', async () => {
      const app = appWith(config);
      const issued = await request(app)
        .post('/oauth2/token')
        .auth('my-client', 'whatever')
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'read:pets write:pets' })
        .expect(200);
      expect(issued.headers['cache-control']).toBe('no-store');
      expect(issued.body).toMatchObject({
        token_type: 'bearer',
        expires_in: 600,
        scope: 'read:pets write:pets',
      });
      const res = await request(app)
        .get('/pets')
        .set('Authorization', `Bearer ${issued.body.access_token}`)
        .expect(200);
      expect(res.body).toMatchObject({
        clientId: 'my-client',
        scopes: ['read:pets', 'write:pets'],
      });
    });

    it('takes client_id and user_id from the form when there is no Basic header', async () => {
      const app = appWith(config);
      const issued = await request(app)
        .post('/oauth2/token')
        .type('form')
        .send({ client_id: 'form-client', user_id: 'u9' })
        .expect(200);
      expect(issued.body.scope).toBeUndefined();
      const res = await request(app)
        .get('/pets')
        .set('Authorization', `Bearer ${issued.body.access_token}`)
        .expect(403);
      expect(res.body.code).toBe('ERR10005');
      const claims = JSON.parse(
        Buffer.from(issued.body.access_token.split('.')[1], 'base64url').toString(),
      );
      expect(claims).toMatchObject({ client_id: 'form-client', user_id: 'u9', scope: [] });
    });

    it('defaults the client id', async () => {
      const issued = await request(appWith(config)).post('/oauth2/token').auth('', '').expect(200);
      const claims = JSON.parse(
        Buffer.from(issued.body.access_token.split('.')[1], 'base64url').toString(),
      );
      expect(claims.client_id).toBe('mock-client');
    });

    it('is served even with verification off, and absent when enableMockJwt is false', async () => {
      await request(appWith({ ...config, enableVerifyJwt: false }))
        .post('/oauth2/token')
        .expect(200);
      await request(appWith(securityConfig(certificate, { enableVerifyJwt: false })))
        .post('/oauth2/token')
        .expect(404);
    });

    it('refuses to be built with NODE_ENV=production', () => {
      expect(() => createSecurityMiddleware({ config, env: { NODE_ENV: 'production' } })).toThrow(
        'Config error in security.yml at key "enableMockJwt": must be false when NODE_ENV=production (the mock token endpoint is for tests only)',
      );
    });
  });
});
