import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface Trace {
  correlationId: string;
  traceabilityId?: string;
}

/**
 * light-4j's correlation handler: `X-Correlation-Id` is kept when the caller sent a sane one and
 * generated otherwise; `X-Traceability-Id` is kept when present. Both are echoed on the answer.
 */
export function correlationMiddleware(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-correlation-id'];
    const correlationId =
      typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
    const traceHeader = req.headers['x-traceability-id'];
    const traceabilityId =
      typeof traceHeader === 'string' && SAFE_ID.test(traceHeader) ? traceHeader : undefined;
    const trace: Trace = { correlationId, traceabilityId };
    res.locals.trace = trace;
    res.setHeader('X-Correlation-Id', correlationId);
    if (traceabilityId) res.setHeader('X-Traceability-Id', traceabilityId);
    next();
  };
}

export function traceOf(res: Response): Trace {
  return (res.locals.trace as Trace | undefined) ?? { correlationId: randomUUID() };
}
