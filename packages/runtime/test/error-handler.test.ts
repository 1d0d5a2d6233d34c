import express from 'express';
import request from 'supertest';
import { StatusError } from '@chain/security';
import { createLogger, errorHandler } from '../src';

function appThrowing(error: unknown) {
  const lines: string[] = [];
  const logger = createLogger('test');
  const app = express();
  app.use(express.json());
  app.post('/body', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/throw', () => {
    throw error;
  });
  app.use(
    errorHandler(
      Object.assign(logger, {
        error: (obj: unknown, msg: string) => lines.push(JSON.stringify({ obj, msg })),
        warn: (obj: unknown, msg: string) => lines.push(JSON.stringify({ obj, msg })),
      }),
    ),
  );
  return { app, lines };
}

describe('errorHandler', () => {
  it('renders a StatusError as its catalogue row with its headers', async () => {
    const { app } = appThrowing(new StatusError('ERR10001'));
    const res = await request(app).get('/throw');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('application/json');
    // The challenge itself is the security package's; the renderer must send it as built.
    expect(res.headers['www-authenticate']).toBe(
      new StatusError('ERR10001').headers['WWW-Authenticate'],
    );
    expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(res.body).toEqual({
      statusCode: 401,
      code: 'ERR10001',
      message: 'AUTH_TOKEN_EXPIRED',
      description: 'Jwt token in authorization header expired',
    });
  });

  it('turns an unknown error into ERR10010 without leaking it', async () => {
    const { app, lines } = appThrowing(new Error('secret detail at /srv/app.js:1'));
    const res = await request(app).get('/throw');
    expect(res.status).toBe(500);
    expect(res.text).toBe(
      '{"statusCode":500,"code":"ERR10010","message":"RUNTIME_EXCEPTION","description":"Unexpected runtime exception"}',
    );
    expect(lines.join('\n')).toMatch(/request failed/);
  });

  it('answers ERR11005 for a body Express cannot parse', async () => {
    const { app } = appThrowing(undefined);
    const res = await request(app)
      .post('/body')
      .set('Content-Type', 'application/json')
      .send('{bad');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      code: 'ERR11005',
      message: 'MALFORMED_REQUEST',
      description: 'The request cannot be parsed',
    });
  });

  it('answers 403 with the required scopes in WWW-Authenticate', async () => {
    const error = new StatusError('ERR10005', ['[a]', '[api_a.r, api_a.w]'], {
      requiredScopes: ['api_a.r', 'api_a.w'],
    });
    const { app } = appThrowing(error);
    const res = await request(app).get('/throw');
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBe(error.headers['WWW-Authenticate']);
    expect(res.headers['www-authenticate']).toMatch(
      /error="insufficient_scope".*scope="api_a.r api_a.w"/,
    );
  });
});
