import http from 'node:http';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';

/**
 * The request pipeline of every service, on Node's own request and response objects.
 *
 * Why not an Express app: on this machine Express (4 or 5) answering two messages costs about
 * five times a bare node:http handler (8k against 44k requests/s over HTTP, 6k against 27k over
 * HTTPS; docs/benchmarks.md), and the chain pays that on every hop. The shared middleware keeps
 * Express's `(req, res, next)` contract and types; these classes give Node's objects the few
 * Express helpers it uses (`req.path`, `res.locals`, `status`, `set`, `json`, `send`).
 */
export class ChainRequest extends http.IncomingMessage {
  /** The URL path without the query string, undecoded (as Express's `req.path`). */
  // Set per request by the pipeline; `declare` so no initializer runs twice.
  declare path: string;
}

export class ChainResponse<
  R extends http.IncomingMessage = http.IncomingMessage,
> extends http.ServerResponse<R> {
  declare locals: Record<string, unknown>;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  set(name: string, value: string): this {
    this.setHeader(name, value);
    return this;
  }

  json(body: unknown): this {
    if (!this.hasHeader('Content-Type')) {
      this.setHeader('Content-Type', 'application/json; charset=utf-8');
    }
    return this.send(JSON.stringify(body));
  }

  send(body: string | Buffer): this {
    this.setHeader(
      'Content-Length',
      typeof body === 'string' ? Buffer.byteLength(body) : body.length,
    );
    this.end(body);
    return this;
  }
}

/** Options for `http(s).createServer` so requests arrive as ChainRequest / ChainResponse. */
export const SERVER_CLASSES = { IncomingMessage: ChainRequest, ServerResponse: ChainResponse };

export type NodeHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function prepare(req: http.IncomingMessage, res: http.ServerResponse): void {
  // Objects made by another server (supertest's, in tests) get the helpers here; a service's own
  // server makes them with SERVER_CLASSES, so this costs nothing there.
  if (!(res instanceof ChainResponse)) Object.setPrototypeOf(res, ChainResponse.prototype);
  if (!(req instanceof ChainRequest)) Object.setPrototypeOf(req, ChainRequest.prototype);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  (req as ChainRequest).path = q < 0 ? url : url.slice(0, q);
  (res as ChainResponse).locals = {};
}

/**
 * Runs the stages in order, each calling `next()` to go on or `next(err)` to stop; a thrown error
 * or a rejected promise counts as `next(err)`. Errors go to `onError`; running past the last
 * stage goes to `onEnd`.
 */
export function pipeline(
  stages: RequestHandler[],
  onEnd: RequestHandler,
  onError: ErrorRequestHandler,
): NodeHandler {
  return (nodeReq, nodeRes) => {
    prepare(nodeReq, nodeRes);
    const req = nodeReq as unknown as Request;
    const res = nodeRes as unknown as Response;
    let index = 0;
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      try {
        onError(err, req, res, () => undefined);
      } catch {
        nodeRes.destroy();
      }
    };
    const run = (stage: RequestHandler): void => {
      try {
        const result = stage(req, res, next) as unknown;
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then(undefined, fail);
        }
      } catch (err) {
        fail(err);
      }
    };
    function next(err?: unknown): void {
      if (err !== undefined && err !== null && err !== 'route') return fail(err);
      const stage = stages[index++];
      run(stage ?? onEnd);
    }
    next();
  };
}
