import type http from 'node:http';
import type { Operation, ParamValue } from '@chain/openapi';
import type { AuthInfo } from '@chain/security';
import { clientCertThumbprint } from './client-certificate.js';
import { readTrace, type Trace } from './correlation.js';

/** Each field has one writer, named here. */
export interface RequestContext {
  readonly trace: Trace;
  /** Routing stage. */
  operation?: Operation;
  /** Routing stage. */
  rawParams: Readonly<Record<string, string>>;
  /** Validation stage, after security. */
  params: Readonly<Record<string, ParamValue>>;
  /** Security stage; for a 403, the caller whose scopes did not match. */
  caller?: AuthInfo;
  /** RFC 8705 `x5t#S256` of the connection's verified client certificate (two-way TLS). */
  readonly clientCertThumbprint: string | undefined;
}

/** One request and its response on either host (light-4j's HttpServerExchange). */
export interface Exchange {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  /** Upper-case, as sent (`HEAD` is routed to the GET operation). */
  readonly method: string;
  /** Without the query string, as sent (not decoded). */
  readonly path: string;
  readonly context: RequestContext;
}

const NO_PARAMS: Readonly<Record<string, never>> = Object.freeze({});

export function createExchange(req: http.IncomingMessage, res: http.ServerResponse): Exchange {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const trace = readTrace(req.headers);
  res.setHeader('X-Correlation-Id', trace.correlationId);
  if (trace.traceabilityId) res.setHeader('X-Traceability-Id', trace.traceabilityId);
  return {
    req,
    res,
    method: req.method ?? 'GET',
    path: q < 0 ? url : url.slice(0, q),
    context: {
      trace,
      rawParams: NO_PARAMS,
      params: NO_PARAMS,
      clientCertThumbprint: clientCertThumbprint(req),
    },
  };
}

export function answered(x: Exchange): boolean {
  return x.res.headersSent || x.res.writableEnded;
}

/** Returns to pass the request on, answers to end the run, or throws for the error renderer. */
export type Stage = (x: Exchange) => void | Promise<void>;

/** A returned value is answered as JSON with 200; a thrown StatusError is its catalogue row. */
export type Handler = (x: Exchange) => unknown;
