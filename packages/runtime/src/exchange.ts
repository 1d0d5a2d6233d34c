import type http from 'node:http';
import type { Operation, ParamValue } from '@chain/openapi';
import type { AuthInfo } from '@chain/security';
import { clientCertThumbprint } from './client-certificate';
import { readTrace, type Trace } from './correlation';

/**
 * What the stages learn about one request, typed. Each field has one writer, named here; every
 * later stage, the handler and the log lines read it. Later concerns add their own field here.
 */
export interface RequestContext {
  /** The correlation and traceability ids; set when the exchange is made, before any stage. */
  readonly trace: Trace;
  /** The spec operation of the request (routing stage). */
  operation?: Operation;
  /** Path parameters as sent, by name (routing stage). */
  rawParams: Readonly<Record<string, string>>;
  /** Path parameters as the spec types them (validation stage, after security). */
  params: Readonly<Record<string, ParamValue>>;
  /** The verified caller (security stage); for a 403, the caller whose scopes did not match. */
  caller?: AuthInfo;
  /**
   * RFC 8705 `x5t#S256` of the client certificate the connection presented (server.yml
   * `enableTwoWayTls`): base64url of the SHA-256 of its DER bytes, computed once per connection
   * when the handshake completes; undefined without two-way TLS. Set when the exchange is made.
   */
  readonly clientCertThumbprint: string | undefined;
}

/**
 * One request and its response as every stage and handler sees them, on either host: Node's own
 * request and response objects (typed as Node's, so only Node's API compiles), the method and
 * path as sent, and the typed context. light-4j calls the same thing an HttpServerExchange.
 */
export interface Exchange {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  /** The request method as sent, upper-case (`HEAD` is routed to the GET operation). */
  readonly method: string;
  /** The URL path without the query string, as sent (not decoded). */
  readonly path: string;
  readonly context: RequestContext;
}

const NO_PARAMS: Readonly<Record<string, never>> = Object.freeze({});

/** Makes the exchange of a request: reads its trace ids and echoes them on the response. */
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

/** Whether the response has begun: a stage that answered ends the run of stages. */
export function answered(x: Exchange): boolean {
  return x.res.headersSent || x.res.writableEnded;
}

/**
 * One step of the request pipeline. It returns (or resolves) to pass the request on, answers the
 * response to end the run, or throws (rejects) to hand an error to the error renderer. Stages
 * run unchanged on the native host and inside an Express application.
 */
export type Stage = (x: Exchange) => void | Promise<void>;

/**
 * A service's handler of one spec operation. Its return value is answered as JSON with 200; a
 * handler that answers the response itself returns nothing. A thrown StatusError is its
 * catalogue row.
 */
export type Handler = (x: Exchange) => unknown;
