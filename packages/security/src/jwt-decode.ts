import { DEFAULT_ALGORITHMS, type Algorithm } from './algorithms';
import { invalidToken } from './token-error';

export interface JwtHeader {
  alg: Algorithm;
  kid: string;
  [name: string]: unknown;
}

export type JwtClaims = Record<string, unknown>;

export interface DecodedJwt {
  header: JwtHeader;
  claims: JwtClaims;
  /** `<header>.<payload>` as sent: the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
}

/** Longest token accepted (ours). light-oauth2 tokens are well under 2 KB. */
export const MAX_TOKEN_LENGTH = 8192;

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** A key id that is a plain name: no slash, no `..`, nothing a URL or a path could misread. */
const KID = /^(?!\.+$)[A-Za-z0-9._-]{1,128}$/;

/**
 * Splits and parses a compact JWS without trusting any of it: three base64url segments, header
 * and payload JSON objects, `alg` one of the allowed algorithms (never `none` or HS*, whatever
 * else the header says), no `crit` extensions, a plain `kid`. The signature is not checked here.
 */
export function decodeJwt(
  token: string,
  maxLength = MAX_TOKEN_LENGTH,
  algorithms: readonly Algorithm[] = DEFAULT_ALGORITHMS,
): DecodedJwt {
  if (token.length > maxLength) throw invalidToken(`token longer than ${maxLength} characters`);
  const parts = token.split('.');
  if (parts.length !== 3) throw invalidToken('token is not three dot-separated segments');
  const [h, p, s] = parts;
  if (!SEGMENT.test(h) || !SEGMENT.test(p) || (s !== '' && !SEGMENT.test(s))) {
    throw invalidToken('a token segment is not base64url');
  }
  const header = parseObject(h, 'header');
  if (!algorithms.includes(header.alg as Algorithm)) {
    throw invalidToken(`alg is not ${algorithms.join(', ')}`);
  }
  if (header.crit !== undefined) throw invalidToken('crit header parameters are not supported');
  if (typeof header.kid !== 'string' || !KID.test(header.kid)) {
    throw invalidToken('kid is missing or is not a plain key id');
  }
  if (s === '') throw invalidToken('signature is empty');
  const claims = parseObject(p, 'payload');
  return {
    header: header as JwtHeader,
    claims,
    signingInput: `${h}.${p}`,
    signature: Buffer.from(s, 'base64url'),
  };
}

function parseObject(segment: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    // The parser's message quotes the input: never passed on.
    throw invalidToken(`${what} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidToken(`${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}
