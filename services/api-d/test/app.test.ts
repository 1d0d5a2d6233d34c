import request from 'supertest';
import { createApp } from '../src/app.js';
import { SECURITY_ON } from '@chain/testkit';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';

const app = (files: Record<string, string> = {}) =>
  createApp(serviceConfig('api-d', files), silentLogger()).listener;

describe('api-d', () => {
  it('answers its own two messages on GET /v1/data', async () => {
    const res = await request(app()).get('/v1/data');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(['API D: Message 1', 'API D: Message 2']);
  });

  it('answers /health without a token, even with security on', async () => {
    const res = await request(app({ 'security.yml': SECURITY_ON })).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'UP', serviceId: 'com.networknt.apid-1.0.0' });
  });

  it('answers ERR10007 for a path not in the spec', async () => {
    const res = await request(app()).get('/v1/other');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({
      statusCode: 404,
      code: 'ERR10007',
      message: 'INVALID_REQUEST_PATH',
      description: 'Request path /v1/other cannot be found in the spec.',
    });
  });

  it('answers ERR10008 for a method not in the spec', async () => {
    const res = await request(app()).post('/v1/data');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({
      statusCode: 405,
      code: 'ERR10008',
      message: 'METHOD_NOT_ALLOWED',
      description: 'Request method POST cannot be found in the path /v1/data.',
    });
  });

  it('with security on, refuses a request without a bearer token with ERR10002', async () => {
    const secured = app({ 'security.yml': SECURITY_ON });
    for (const header of [undefined, 'Basic abc', 'Bearer', 'Bearer a b']) {
      const req = request(secured).get('/v1/data');
      const res = await (header ? req.set('Authorization', header) : req);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.text).toBe(
        '{"statusCode":401,"code":"ERR10002","message":"MISSING_AUTH_TOKEN","description":"No Authorization header or the token is not bearer type"}',
      );
    }
  });

  it('keeps a sane X-Correlation-Id and replaces an unsafe one', async () => {
    const kept = await request(app()).get('/v1/data').set('X-Correlation-Id', 'abc-123');
    expect(kept.headers['x-correlation-id']).toBe('abc-123');
    const replaced = await request(app()).get('/v1/data').set('X-Correlation-Id', 'a b<script>');
    expect(replaced.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
