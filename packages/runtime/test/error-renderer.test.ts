import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StatusError } from '@chain/errors';
import { asStatusError, createErrorRenderer, reasonOf } from '../src/error-renderer.js';
import { createExchange } from '../src/exchange.js';
import { captureLogger } from './support.js';

describe('asStatusError', () => {
  it.each([
    [new StatusError('ERR10001'), 'ERR10001'],
    [Object.assign(new Error('too big'), { status: 413 }), 'ERR10068'],
    [Object.assign(new Error('slow'), { status: 408 }), 'ERR20009'],
    [Object.assign(new Error('bad json'), { status: 400 }), 'ERR20007'],
    [Object.assign(new Error('teapot'), { status: 418 }), 'ERR20007'],
    [Object.assign(new Error('upstream'), { status: 502 }), 'ERR10010'],
    [new Error('boom'), 'ERR10010'],
    ['a string', 'ERR10010'],
  ])('%#: maps to %s', (err, code) => {
    expect(asStatusError(err).code).toBe(code);
  });
});

describe('reasonOf', () => {
  it('joins the messages of an error and its causes, without a stack', () => {
    const err = new Error('outer', { cause: new Error('inner', { cause: 'root text' }) });
    expect(reasonOf(err)).toBe('outer: inner: root text');
    expect(reasonOf({})).toBe('a non-Error value');
  });
});

/** Renders one error on a real response, and returns the answer and the log. */
async function render(err: unknown, beforeRender?: (res: http.ServerResponse) => void) {
  const log = captureLogger();
  const renderError = createErrorRenderer(log.logger);
  const server = http.createServer((req, res) => {
    const x = createExchange(req, res);
    beforeRender?.(res);
    renderError(x, err);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const answer = await new Promise<{ status: number; body: string } | Error>((resolve) => {
      http
        .get(
          { host: '127.0.0.1', port, path: '/x', headers: { 'X-Correlation-Id': 'c-1' } },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            res.on('error', (e) => resolve(e));
          },
        )
        .on('error', (e) => resolve(e));
    });
    return { answer, lines: log.lines() };
  } finally {
    server.close();
  }
}

describe('the error renderer', () => {
  it('logs an upstream failure in one warn line with its reason, no stack', async () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:7444');
    const { answer, lines } = await render(new StatusError('ERR20002', ['api-d'], { cause }));
    expect(answer).toMatchObject({ status: 502 });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'ERR20002',
        correlationId: 'c-1',
        method: 'GET',
        path: '/x',
        reason: 'connect ECONNREFUSED 127.0.0.1:7444',
        msg: 'Downstream service api-d could not be reached',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/\bat /);
  });

  it('does not log a refused credential again (the security stage did), nor a plain 404', async () => {
    const cause = new Error('signature does not verify');
    expect((await render(new StatusError('ERR10000', [], { cause }))).lines).toEqual([]);
    expect((await render(new StatusError('ERR10007', ['/x']))).lines).toEqual([]);
  });

  it('logs a client-side cause at info level', async () => {
    const err = Object.assign(new Error('Unexpected token'), { status: 400 });
    const { lines } = await render(err);
    expect(lines).toEqual([expect.objectContaining({ level: 30, code: 'ERR20007' })]);
  });

  it('cuts the connection when the answer has already begun', async () => {
    const { answer } = await render(new Error('late'), (res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial');
    });
    // The client sees a broken answer (an aborted response), never a 200 taken for whole.
    expect((answer as { status?: number }).status).toBeUndefined();
  });
});
