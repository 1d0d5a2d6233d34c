import { CERTS, DEV_KEYS, type DevKid } from './paths.js';

export interface JwtSecurityOptions {
  /** `enableVerifyScope: true` after `enableVerifyJwt: true`. */
  scope?: boolean;
  /** Lines of the `jwt` map before its `certificate` map (indented two spaces). */
  jwt?: string;
  /** The development certificates in `jwt.certificate`, by kid (default both). */
  kids?: DevKid[];
  /** More lines of `jwt.certificate` (indented four spaces). */
  certificates?: string;
  /** `jwt.clockSkewInSeconds`. */
  clockSkewInSeconds?: number;
  /** Top-level keys after the `jwt` map, in this order (`logJwtToken: false`, …). */
  keys?: Record<string, boolean | number | string>;
  /** Raw lines at the end. */
  extra?: string;
}

/**
 * security.yml with JWT verification on and the development certificates: the one writer of
 * the file for the tests and the bench. The `jwt` map is left out when it would be empty
 * (`kids: []` and no other jwt line).
 */
export function jwtSecurityYml(options: JwtSecurityOptions = {}): string {
  const { kids = ['100', '101'], jwt = '', certificates = '' } = options;
  const certificateMap =
    kids.length > 0 || certificates
      ? `  certificate:\n${kids.map((kid) => `    '${kid}': ${CERTS}/${DEV_KEYS[kid]}.crt\n`).join('')}${certificates}`
      : '';
  const skew =
    options.clockSkewInSeconds === undefined
      ? ''
      : `  clockSkewInSeconds: ${options.clockSkewInSeconds}\n`;
  const jwtMap = jwt || certificateMap || skew ? `jwt:\n${jwt}${certificateMap}${skew}` : '';
  const keys = Object.entries(options.keys ?? {})
    .map(([key, value]) => `${key}: ${value}\n`)
    .join('');
  return `enableVerifyJwt: true\n${options.scope ? 'enableVerifyScope: true\n' : ''}${jwtMap}${keys}${options.extra ?? ''}`;
}

/** security.yml with JWT verification on, certificates 100 and 101 of the development set. */
export const SECURITY_ON = jwtSecurityYml();
