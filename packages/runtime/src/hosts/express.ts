import type http from 'node:http';
import { createRequire } from 'node:module';
import type express from 'express';
import {
  answered,
  createExchange,
  type Exchange,
  type RequestContext,
  type Stage,
} from '../exchange.js';
import type { RenderError } from './native.js';

const exchanges = new WeakMap<http.IncomingMessage, Exchange>();

function exchangeOf(req: http.IncomingMessage, res: http.ServerResponse): Exchange {
  const x = exchanges.get(req) ?? createExchange(req, res);
  exchanges.set(req, x);
  return x;
}

export function contextOf(req: http.IncomingMessage): RequestContext {
  const x = exchanges.get(req);
  if (!x) throw new TypeError('contextOf: the request did not pass a chain service application');
  return x.context;
}

export function expressStage(stage: Stage): express.RequestHandler {
  return (req, res, next) => {
    const x = exchangeOf(req, res);
    let result: void | Promise<void>;
    try {
      result = stage(x);
    } catch (err) {
      return next(err);
    }
    if (result instanceof Promise) {
      result.then(
        () => {
          if (!answered(x)) next();
        },
        (err: unknown) => next(err ?? new Error('a stage failed without a reason')),
      );
    } else if (!answered(x)) {
      next();
    }
  };
}

export interface ExpressExtensions {
  /** Middleware after the probes and metrics, before routing and security (cors, helmet …). */
  beforeRouting?: (app: express.Application) => void;
  /** Routes for operations of the spec, after routing, security and validation. */
  afterSecurity?: (app: express.Application) => void;
}

export interface ExpressStages {
  outer: readonly Stage[];
  spec: readonly Stage[];
  end: Stage;
  renderError: RenderError;
}

export function expressApplication(
  stages: ExpressStages,
  extensions: ExpressExtensions = {},
): express.Application {
  // Required when first used: a service on the native host never loads Express (6 MB of RSS).
  const app = (createRequire(import.meta.url)('express') as typeof express)();
  app.disable('x-powered-by');
  app.disable('etag');
  for (const stage of stages.outer) app.use(expressStage(stage));
  extensions.beforeRouting?.(app);
  for (const stage of stages.spec) app.use(expressStage(stage));
  extensions.afterSecurity?.(app);
  app.use(expressStage(stages.end));
  const renderError: express.ErrorRequestHandler = (err, req, res, _next) =>
    stages.renderError(exchangeOf(req, res), err);
  app.use(renderError);
  return app;
}
