import { randomFillSync } from 'node:crypto';

/**
 * Random W3C trace and span ids, cheaply: one 4 KB read of the system's random source serves
 * 512 span ids (or 256 trace ids), instead of a `randomBytes` call per id.
 */
const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;

function randomHex(bytes: number): string {
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const hex = POOL.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** 16 random bytes as 32 lower-case hex digits, never all zero (W3C Trace Context 3.2.2.3). */
export function newTraceId(): string {
  const id = randomHex(16);
  return id === '00000000000000000000000000000000' ? newTraceId() : id;
}

/** 8 random bytes as 16 lower-case hex digits, never all zero (3.2.2.4). */
export function newSpanId(): string {
  const id = randomHex(8);
  return id === '0000000000000000' ? newSpanId() : id;
}
