import request from 'supertest';
import { createApp } from '../src/app.js';
import type { Pet } from '../src/pet-store.js';
import { SECURITY_ON, PET_1 } from '@chain/testkit';
import { serviceConfig, silentLogger } from '../../../test/support/service-config.js';

const app = (files: Record<string, string> = {}) =>
  createApp(serviceConfig('petstore', files), silentLogger()).listener;

describe('petstore', () => {
  it('answers a Pet with every field', async () => {
    const res = await request(app()).get('/v2/pet/1');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(PET_1);
  });

  it.each(['abc', '1.5', '1e3', '%zz', '99999999999999999999'])(
    'answers 400 ERR11004 for petId %s',
    async (petId) => {
      const res = await request(app()).get(`/v2/pet/${petId}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('ERR11004');
      expect(res.body.statusCode).toBe(400);
      expect(res.body.message).toBe('VALIDATOR_SCHEMA');
      expect(res.body.description).toMatch(/^Schema validation error: path parameter petId/);
    },
  );

  it('answers 404 ERR20001 for a pet that is not in the store', async () => {
    const res = await request(app()).get('/v2/pet/42');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      statusCode: 404,
      code: 'ERR20001',
      message: 'RESOURCE_NOT_FOUND',
      description: 'Pet 42 cannot be found.',
    });
  });

  it('answers 404 ERR10007 for a path not in the spec', async () => {
    const res = await request(app()).get('/v2/store/inventory');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      statusCode: 404,
      code: 'ERR10007',
      message: 'INVALID_REQUEST_PATH',
      description: 'Request path /v2/store/inventory cannot be found in the spec.',
    });
  });

  it('answers 405 ERR10008 for a method not in the spec', async () => {
    const res = await request(app()).delete('/v2/pet/1');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({
      statusCode: 405,
      code: 'ERR10008',
      message: 'METHOD_NOT_ALLOWED',
      description: 'Request method DELETE cannot be found in the path /v2/pet/1.',
    });
  });

  it('with security on, answers exactly ERR10002 without an Authorization header', async () => {
    const res = await request(app({ 'security.yml': SECURITY_ON })).get('/v2/pet/1');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe(
      '{"statusCode":401,"code":"ERR10002","message":"MISSING_AUTH_TOKEN","description":"No Authorization header or the token is not bearer type"}',
    );
  });

  it('never answers a stack trace: a failing store, bad input, a malformed body', async () => {
    const failing = new Map<number, Pet>();
    failing.get = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'id')");
    };
    const broken = createApp(serviceConfig('petstore'), silentLogger(), failing).listener;
    const answers = [
      await request(broken).get('/v2/pet/1'),
      await request(app()).get('/v2/pet/%E0%A4%A'),
      await request(app()).post('/v2/pet/1').set('Content-Type', 'application/json').send('{not'),
      await request(app()).get(`/v2/${'<script>'.repeat(100)}`),
    ];
    expect(answers.map((r) => [r.status, r.headers['content-type'], r.body.code])).toEqual([
      [500, 'application/json', 'ERR10010'],
      [400, 'application/json', 'ERR11004'],
      [405, 'application/json', 'ERR10008'],
      [404, 'application/json', 'ERR10007'],
    ]);
    for (const res of answers) {
      expect(Object.keys(res.body)).toEqual(['statusCode', 'code', 'message', 'description']);
      expect(res.text).not.toMatch(/\bat |\.ts:|\.js:|TypeError|Cannot read/);
    }
    expect(answers[0].body.description).toBe('Unexpected runtime exception');
  });

  it('serves a GET whose body is malformed JSON: a GET body is not read', async () => {
    const res = await request(app())
      .get('/v2/pet/1')
      .set('Content-Type', 'application/json')
      .send('{not json');
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Rex');
  });
});
