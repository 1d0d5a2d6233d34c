import type http from 'node:http';
import { answered, createExchange, type Exchange, type Stage } from '../exchange.js';

export type RenderError = (x: Exchange, err: unknown) => void;

/** The stages in order on Node's request and response; sync stages cost no promise. */
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
