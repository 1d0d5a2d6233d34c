import type http from 'node:http';
import getRawBody from 'raw-body';
import { StatusError } from '@chain/errors';

export const isHttp2 = (res: http.ServerResponse): boolean =>
  (res as unknown as { stream?: unknown }).stream !== undefined;

export const JSON_TYPE = 'application/json; charset=utf-8';
export const ERROR_TYPE = 'application/json';

/** Node leaves the body out of an answer to HEAD and keeps the length, as RFC 9110 asks. */
export function send(
  res: http.ServerResponse,
  statusCode: number,
  contentType: string,
  body: string | Buffer,
  headers?: Readonly<Record<string, string>>,
): void {
  if (headers) {
    const h2 = isHttp2(res);
    for (const name in headers) {
      // HTTP/2 has no Connection header (the session's GOAWAY does its work).
      if (h2 && name.toLowerCase() === 'connection') continue;
      res.setHeader(name, headers[name]);
    }
  }
  res.writeHead(statusCode, {
    'Content-Type': contentType,
    'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
  });
  res.end(body);
}

export function sendJson(res: http.ServerResponse, statusCode: number, value: unknown): void {
  send(res, statusCode, JSON_TYPE, JSON.stringify(value));
}

export function sendEmpty(
  res: http.ServerResponse,
  statusCode: number,
  headers: Readonly<Record<string, string>>,
): void {
  res.writeHead(statusCode, headers);
  res.end();
}

export function sendError(res: http.ServerResponse, error: StatusError): void {
  send(res, error.statusCode, ERROR_TYPE, JSON.stringify(error.body), error.headers);
}

/** Over `maxBytes`: ERR10068 and the connection closed after the answer (the rest is unread). */
export async function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  try {
    return await getRawBody(req, { length: req.headers['content-length'], limit: maxBytes });
  } catch (err) {
    if ((err as getRawBody.RawBodyError).type !== 'entity.too.large') throw err;
    throw new StatusError('ERR10068', [], { headers: { Connection: 'close' } });
  }
}
