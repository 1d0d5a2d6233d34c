import type { Exchange, Handler, Stage } from '../exchange.js';
import { answered } from '../exchange.js';
import { sendJson } from '../respond.js';

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
