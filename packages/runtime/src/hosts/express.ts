import type http from 'node:http';
import express from 'express';
import {
  answered,
  createExchange,
  type Exchange,
  type RequestContext,
  type Stage,
} from '../exchange';
import type { RenderError } from './native';

/** The exchange of each request that entered a chain service's Express application. */
const exchanges = new WeakMap<http.IncomingMessage, Exchange>();

function exchangeOf(req: http.IncomingMessage, res: http.ServerResponse): Exchange {
  let x = exchanges.get(req);
  if (!x) {
    x = createExchange(req, res);
    exchanges.set(req, x);
  }
  return x;
}

/**
 * The typed context of a request, for Express middleware and routes a service adds: the trace,
 * the spec operation, the typed path parameters and the verified caller. Throws a TypeError for
 * a request that did not enter through a chain service's application.
 */
export function contextOf(req: http.IncomingMessage): RequestContext {
  const x = exchanges.get(req);
  if (!x) throw new TypeError('contextOf: the request did not pass a chain service application');
  return x.context;
}

/** A stage as Express middleware: the same code, called with the request's exchange. */
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

/** Where a service's Express code goes in the application (server.yml `framework: express`). */
export interface ExpressExtensions {
  /**
   * Middleware for every request (cors, helmet, compression, a rate limiter …). It runs after
   * the probes and metrics, before the spec routing and security: a request it answers itself
   * (a CORS preflight) skips them.
   */
  beforeRouting?: (app: express.Application) => void;
  /**
   * Routes and routers for operations of the spec that the service does not handle with
   * `routes`. They run after routing, security and validation, so a request reaches them only
   * when it passed; `contextOf(req)` gives its caller and typed parameters.
   */
  afterSecurity?: (app: express.Application) => void;
}

/** The stages of a service in the order the Express host mounts them. */
export interface ExpressStages {
  /** Before the service's own middleware: probes, metrics, the mock token route. */
  outer: readonly Stage[];
  /** Routing, security, validation, the service's handlers. */
  spec: readonly Stage[];
  /** After the service's own routes: nothing answered. */
  end: Stage;
  renderError: RenderError;
}

/**
 * The Express host: a real `express.Application` with the service's stages mounted as
 * middleware and its error renderer as the error handler, extended by the service's own Express
 * code where `extensions` says.
 */
export function expressApplication(
  stages: ExpressStages,
  extensions: ExpressExtensions = {},
): express.Application {
  const app = express();
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
