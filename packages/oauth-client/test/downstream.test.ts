import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
  new Downstream({ url, timeoutMs, httpsAgent: trustingAgent() });

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
        description: `Downstream service ${url} could not be reached`,
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
        description: `Downstream service ${url} did not answer within 150 ms`,
      },
    });
  });

  it('a non-2xx answer is ERR20004 naming status and code', async () => {
    answer = (res) => send(res, 401, { code: 'ERR10000', description: 'x' });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: expect.stringMatching(/answered HTTP 401 ERR10000$/),
      },
    });
    answer = (res) => send(res, 500, 'oops', 'text/plain');
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20004', description: expect.stringMatching(/answered HTTP 500$/) },
    });
  });

  it("a downstream's own ERR10009 is passed on as it came", async () => {
    answer = (res) =>
      send(res, 408, { statusCode: 408, code: 'ERR10009', message: 'M', description: 'from D' });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 408,
        code: 'ERR10009',
        message: 'CLIENT_CREDENTIALS_TOKEN_NOT_AVAILABLE',
        description: 'from D',
      },
    });
    answer = (res) => send(res, 502, { code: 'ERR20002' });
    await expect(downstream().getJson({})).rejects.toMatchObject({
      body: { code: 'ERR20002', description: 'Downstream service  could not be reached' },
    });
  });

  it('a body past maxBodyBytes is ERR20004, not buffered whole', async () => {
    answer = (res) => send(res, 200, ['x'.repeat(5000)]);
    const small = new Downstream({
      url: `${server.url}/v1/data`,
      timeoutMs: 1000,
      httpsAgent: trustingAgent(),
      maxBodyBytes: 1000,
    });
    await expect(small.getJson({})).rejects.toMatchObject({
      body: {
        statusCode: 502,
        code: 'ERR20004',
        description: `Downstream service ${server.url}/v1/data answered a body larger than 1000 bytes`,
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
