import { coerceParams, type OpenApiSpec } from '@chain/openapi';
import { StatusError } from '@chain/errors';
import { answered, type Exchange, type Handler, type Stage } from '../exchange.js';
import { sendEmpty, sendJson } from '../respond.js';

const MAX_ECHOED_PATH = 200;

export const echoPath = (path: string): string =>
  path.length > MAX_ECHOED_PATH ? path.slice(0, MAX_ECHOED_PATH) + '…' : path;

/** Before security, as light-4j: an unknown path is 404 to anyone. */
export function routingStage(spec: OpenApiSpec): Stage {
  const allowAll = spec.allow;
  return (x) => {
    if (x.path === '*' && x.method === 'OPTIONS') return sendEmpty(x.res, 204, { Allow: allowAll });
    const found = spec.match(x.method, x.path);
    if (found.kind === 'found') {
      x.context.operation = found.operation;
      x.context.rawParams = found.params;
      return;
    }
    if (found.kind === 'no-path') return notFoundStage(x);
    if (x.method === 'OPTIONS') return sendEmpty(x.res, 204, { Allow: found.allow });
    throw new StatusError('ERR10008', [x.method, echoPath(x.path)], {
      headers: { Allow: found.allow },
    });
  };
}

export const validationStage: Stage = (x) => {
  const operation = x.context.operation;
  if (operation && operation.params.length > 0) {
    x.context.params = coerceParams(operation.params, x.context.rawParams);
  }
};

/** An operation without a handler passes on (to the service's own Express routes, if any). */
export function dispatchStage(handlers: ReadonlyMap<string, Handler>): Stage {
  return (x) => {
    const endpoint = x.context.operation?.endpoint;
    const handler = endpoint === undefined ? undefined : handlers.get(endpoint);
    if (!handler) return;
    const result = handler(x);
    if (result instanceof Promise) return result.then((value) => reply(x, value, endpoint!));
    reply(x, result, endpoint!);
  };
}

function reply(x: Exchange, value: unknown, endpoint: string): void {
  if (answered(x)) return;
  if (value === undefined) {
    throw new Error(`the handler of ${endpoint} neither returned a value nor answered`);
  }
  sendJson(x.res, 200, value);
}

export const notFoundStage: Stage = (x) => {
  throw new StatusError('ERR10007', [echoPath(x.path)]);
};
