import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StatusError } from '@chain/security';
import { Downstream } from '../src';
import {
  closedPort,
  httpsServer,
  send,
  trustingAgent,
  type TestServer,
} from './support/https-server';

let server: TestServer;
let answer: (res: http.ServerResponse) => void;
beforeAll(async () => {
  server = await httpsServer((_req, res) => answer(res));
});
afterAll(() => server.close());

const downstream = (url = `${server.url}/v1/data`, timeoutMs = 1000) =>
  new Downstream({ name: 'api-d', url, timeoutMs, httpsAgent: trustingAgent() });

describe('Downstream', () => {
  it('a 2xx JSON answer is returned, the headers sent as given', async () => {
    answer = (res) => send(res, 200, ['API D: Message 1']);
    await expect(
      downstream().getJson({ 'X-Correlation-Id': 'c-1', Authorization: 'Bearer t' }),
    ).resolves.toEqual({ status: 200, body: ['API D: Message 1'] });
    const last = server.seen[server.seen.length - 1];
    expect(last.headers['x-correlation-id']).toBe('c-1');
    expect(last.headers.authorization).toBe('Bearer t');
    expect(last.headers.accept).toBe('application/json');
  });

  it('a refused connection is ERR20002', async () => {
    const url = `https://127.0.0.1:${await closedPort()}/v1/data`;
    await expect(downstream(url).getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20002',
        message: 'DOWNSTREAM_UNAVAILABLE',
        description: 'Downstream service api-d could not be reached',
      },
    });
  });

  it('no answer within the time-out is ERR20003', async () => {
    answer = () => undefined;
    const url = `${server.url}/v1/data`;
    await expect(downstream(url, 150).getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 504,
        code: 'ERR20003',
        message: 'DOWNSTREAM_TIMEOUT',
        description: 'Downstream service api-d did not answer within 150 ms',
      },
    });
  });

  it('a non-2xx answer is ERR20004 naming its status, and its code only when it is ours', async () => {
    answer = (res) => send(res, 401, { code: 'ERR10000', description: 'x' });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: 'Downstream service api-d answered HTTP 401 ERR10000',
      },
    });
    answer = (res) => send(res, 500, 'oops', 'text/plain');
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20004', description: 'Downstream service api-d answered HTTP 500' },
    });
    answer = (res) => send(res, 400, { code: '<script>alert(1)</script>'.repeat(1000) });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20004', description: 'Downstream service api-d answered HTTP 400' },
    });
  });

  it('echoes nothing of a downstream body: 20 KB of markup and a stack in, our words out', async () => {
    const hostile = `<html>${'x'.repeat(20_000)}</html>\n    at Object.<anonymous> (/srv/app.js:1:1)`;
    const url = `${server.url}/v1/data`;
    for (const body of [
      { code: 'ERR20002', description: hostile },
      { code: 'ERR20002', description: `Downstream service ${url} could not be reached` },
      { code: hostile, description: hostile },
    ]) {
      answer = (res) => send(res, 502, body);
      const err = (await downstream()
        .getJson({})
        .catch((e: unknown) => e)) as StatusError;
      expect(err).toBeInstanceOf(StatusError);
      expect(JSON.stringify(err.body)).not.toMatch(/<html>|xxxx|app\.js|localhost|127\.0\.0\.1/);
      expect(JSON.stringify(err.body).length).toBeLessThan(200);
      // The log gets the URL and the start of the body, through the cause.
      expect((err.cause as Error).message.startsWith(`${url} answered HTTP 502: `)).toBe(true);
    }
  });

  it('passes on our failure codes unchanged, with their description when it is one of ours', async () => {
    const cases: [number, object, object][] = [
      [
        408,
        { code: 'ERR10009', description: 'from D' },
        {
          statusCode: 408,
          code: 'ERR10009',
          message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
          description: 'Could not get client credentials token in client module',
        },
      ],
      [
        502,
        { code: 'ERR20002', description: 'Downstream service api-x could not be reached' },
        {
          statusCode: 502,
          code: 'ERR20002',
          message: 'DOWNSTREAM_UNAVAILABLE',
          description: 'Downstream service api-x could not be reached',
        },
      ],
      [
        502,
        { code: 'ERR20002' },
        {
          statusCode: 502,
          code: 'ERR20002',
          message: 'DOWNSTREAM_UNAVAILABLE',
          description: 'Downstream service beyond api-d could not be reached',
        },
      ],
      [
        504,
        { code: 'ERR20003', description: 'Downstream service api-x did not answer within 3000 ms' },
        {
          statusCode: 504,
          code: 'ERR20003',
          message: 'DOWNSTREAM_TIMEOUT',
          description: 'Downstream service api-x did not answer within 3000 ms',
        },
      ],
      [
        502,
        { code: 'ERR20003', description: 'Downstream service https://api-x:7444 did not answer' },
        {
          statusCode: 504,
          code: 'ERR20003',
          message: 'DOWNSTREAM_TIMEOUT',
          description: 'Downstream service beyond api-d did not answer in time',
        },
      ],
      [
        502,
        { code: 'ERR20004', description: 'Downstream service api-x answered HTTP 401 ERR10000' },
        {
          statusCode: 502,
          code: 'ERR20004',
          message: 'DOWNSTREAM_BAD_RESPONSE',
          description: 'Downstream service api-x answered HTTP 401 ERR10000',
        },
      ],
      [
        503,
        { code: 'ERR20005', description: 'The kid <b>' },
        {
          statusCode: 503,
          code: 'ERR20005',
          message: 'KEY_SERVER_UNAVAILABLE',
          description: 'A verification key could not be fetched from the key distribution server',
        },
      ],
    ];
    for (const [status, body, expected] of cases) {
      answer = (res) => send(res, status, body);
      const err = (await downstream()
        .getJson({})
        .catch((e: unknown) => e)) as StatusError;
      expect(err.body).toEqual(expected);
    }
  });

  it('a body past maxBodyBytes is ERR20004, not buffered whole', async () => {
    answer = (res) => send(res, 200, ['x'.repeat(5000)]);
    const small = new Downstream({
      name: 'api-d',
      url: `${server.url}/v1/data`,
      timeoutMs: 1000,
      httpsAgent: trustingAgent(),
      maxBodyBytes: 1000,
    });
    await expect(small.getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: 'Downstream service api-d answered a body larger than 1000 bytes',
      },
    });
  });

  it('speaks plain HTTP to an http:// downstream', async () => {
    const plain = http.createServer((_req, res) => send(res, 200, ['API D: Message 1']));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    try {
      await expect(downstream(`http://127.0.0.1:${port}/v1/data`).getJson({})).resolves.toEqual({
        status: 200,
        body: ['API D: Message 1'],
      });
    } finally {
      plain.close();
    }
  });
});
