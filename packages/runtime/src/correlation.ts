import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The ids that follow a request through the chain and into every log line about it. */
export interface Trace {
  /** `X-Correlation-Id`: the caller's when sane, else generated. */
  correlationId: string;
  /** `X-Traceability-Id`: the caller's, when present and sane. */
  traceabilityId?: string;
}

/**
 * light-4j's correlation and traceability handlers: `X-Correlation-Id` is kept when the caller
 * sent a sane one (letters, digits, `._:-`, at most 128) and generated otherwise;
 * `X-Traceability-Id` is kept when present and sane.
 */
export function readTrace(headers: IncomingHttpHeaders): Trace {
  const incoming = headers['x-correlation-id'];
  const correlationId =
    typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
  const traceHeader = headers['x-traceability-id'];
  return typeof traceHeader === 'string' && SAFE_ID.test(traceHeader)
    ? { correlationId, traceabilityId: traceHeader }
    : { correlationId };
}
