import type { KeyObject } from 'node:crypto';

/** Never `none` or HS*: with a public certificate as the secret anyone could sign (RFC 8725). */
export const SUPPORTED_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type Algorithm = (typeof SUPPORTED_ALGORITHMS)[number];
export const DEFAULT_ALGORITHMS: readonly Algorithm[] = ['RS256'];

/** RFC 7518 sections 3.3 and 3.5. */
export const MIN_RSA_BITS = 2048;

export function isAlgorithm(value: unknown): value is Algorithm {
  return typeof value === 'string' && (SUPPORTED_ALGORITHMS as readonly string[]).includes(value);
}

export function algorithmProblem(name: string): string | undefined {
  if (isAlgorithm(name)) return undefined;
  if (/^none$/i.test(name) || /^HS\d*$/i.test(name)) {
    return `${name} is never accepted (anyone holding the certificate could sign)`;
  }
  return `${name} is not supported; use ${SUPPORTED_ALGORITHMS.join(', ')}`;
}

/** RSA-PSS parameters pinning another hash or a longer salt fail jose's check: refused. */
export function algorithmsOfKey(key: KeyObject): Algorithm[] {
  const details = key.asymmetricKeyDetails!;
  const long = (details.modulusLength ?? 0) >= MIN_RSA_BITS;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return long ? ['RS256', 'PS256'] : [];
    case 'rsa-pss': {
      const {
        hashAlgorithm = 'sha256',
        mgf1HashAlgorithm = hashAlgorithm,
        saltLength = 0,
      } = details;
      const fits =
        hashAlgorithm === 'sha256' && mgf1HashAlgorithm === hashAlgorithm && saltLength <= 32;
      return fits && long ? ['PS256'] : [];
    }
    case 'ec':
      return details.namedCurve === 'prime256v1' ? ['ES256'] : [];
    case 'ed25519':
    case 'ed448':
      return ['EdDSA'];
    default:
      return [];
  }
}

export function describeKey(key: KeyObject): string {
  const { modulusLength, namedCurve } = key.asymmetricKeyDetails!;
  const type = key.asymmetricKeyType!;
  if (type === 'rsa' || type === 'rsa-pss') return `${type.toUpperCase()} ${modulusLength} bits`;
  return type === 'ec' ? `EC ${namedCurve}` : type;
}
