import type http from 'node:http';
import getRawBody from 'raw-body';
import { StatusError } from '@chain/errors';

/** Over `maxBytes`: ERR10068 and the connection closed after the answer (the rest is unread). */
export async function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  try {
    return await getRawBody(req, { length: req.headers['content-length'], limit: maxBytes });
  } catch (err) {
    if ((err as getRawBody.RawBodyError).type !== 'entity.too.large') throw err;
    throw new StatusError('ERR10068', [], { headers: { Connection: 'close' } });
  }
}
