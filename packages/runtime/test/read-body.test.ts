import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { StatusError } from '@chain/errors';
import { readBody } from '../src/respond.js';

/** A request body as a stream, with the headers a request would carry. */
const body = (headers: http.IncomingHttpHeaders = {}) =>
  Object.assign(new PassThrough(), { headers }) as unknown as http.IncomingMessage & PassThrough;

describe('readBody', () => {
  it('reads a body sent in chunks', async () => {
    const req = body();
    const read = readBody(req, 10);
    req.write('abc');
    req.end('def');
    await expect(read).resolves.toEqual(Buffer.from('abcdef'));
  });

  it('refuses a declared length over the limit at once: 413 ERR10068, connection closed after', async () => {
    const err = await readBody(body({ 'content-length': '11' }), 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe('ERR10068');
    expect((err as StatusError).headers.Connection).toBe('close');
  });

  it('refuses a chunked body once it passes the limit, without reading the rest', async () => {
    const req = body();
    const read = readBody(req, 10);
    req.write('123456');
    req.write('789012');
    await expect(read).rejects.toMatchObject({ code: 'ERR10068' });
    expect(req.isPaused()).toBe(true);
  });

  it('passes on a stream error (the client went away)', async () => {
    const req = body();
    const read = readBody(req, 10);
    req.destroy(new Error('aborted'));
    await expect(read).rejects.toThrow('aborted');
  });
});
