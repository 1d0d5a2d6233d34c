import type http from 'node:http';
import { answered, createExchange, type Exchange, type Stage } from '../exchange';

/** What the hosts do with an error a stage threw: the one error renderer. */
export type RenderError = (x: Exchange, err: unknown) => void;

/**
 * The native host, the default: the stages run in order on Node's own request and response,
 * with nothing between them. A stage that answers ends the run; an error goes to `renderError`.
 * Synchronous stages cost no promise.
 */
export function nativeListener(
  stages: readonly Stage[],
  renderError: RenderError,
): http.RequestListener {
  const fail = (x: Exchange, err: unknown) => {
    try {
      renderError(x, err);
    } catch {
      x.res.destroy();
    }
  };
  const run = (x: Exchange, from: number): void => {
    for (let i = from; i < stages.length; i++) {
      let result: void | Promise<void>;
      try {
        result = stages[i](x);
      } catch (err) {
        return fail(x, err);
      }
      if (result instanceof Promise) {
        result.then(
          () => {
            if (!answered(x)) run(x, i + 1);
          },
          (err: unknown) => fail(x, err),
        );
        return;
      }
      if (answered(x)) return;
    }
  };
  return (req, res) => run(createExchange(req, res), 0);
}
