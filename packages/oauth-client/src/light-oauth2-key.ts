import { jsonObject } from '@chain/http';

/** light-oauth2's codes that its key service and its code endpoint answer with (and ours). */
export const LIGHT_OAUTH2_STATUS = {
  ERR12002: { statusCode: 401, message: 'MISSING_AUTHORIZATION_HEADER' },
  ERR12004: { statusCode: 401, message: 'INVALID_BASIC_CREDENTIALS' },
  ERR12007: { statusCode: 401, message: 'UNAUTHORIZED_CLIENT' },
  ERR12014: { statusCode: 404, message: 'CLIENT_NOT_FOUND' },
  ERR12017: { statusCode: 404, message: 'KEY_NOT_FOUND' },
  ERR12026: { statusCode: 400, message: 'MISMATCH_REDIRECT_URI' },
  ERR12030: { statusCode: 400, message: 'INVALID_KEY_ID' },
} as const;

type KeyServiceCode = 'ERR12002' | 'ERR12007' | 'ERR12014' | 'ERR12017' | 'ERR12030';

const DESCRIPTION: Record<KeyServiceCode, (arg: string) => string> = {
  ERR12002: () => 'No authorization header is found in the request.',
  ERR12007: () => 'Unauthorized client with wrong client secret.',
  ERR12014: (clientId) => `Client ${clientId} is not found.`,
  ERR12017: (kid) => `Public key certificate keyId ${kid} is not found.`,
  ERR12030: (kid) => `Invalid key id ${kid}.`,
};

/** Who a Basic header names: a known client with its secret, or why not. */
export type ClientCheck =
  | { ok: true }
  | { ok: false; reason: 'missing' | 'wrong-secret' | 'unknown-client'; clientId?: string };

function status(code: KeyServiceCode, arg = '') {
  const { statusCode, message } = LIGHT_OAUTH2_STATUS[code];
  const description = DESCRIPTION[code](arg);
  const body = JSON.stringify({ statusCode, code, message, description, severity: 'ERROR' });
  return { status: statusCode, contentType: 'application/json', body };
}

/**
 * light-oauth2's Oauth2KeyKeyIdGetHandler. A kid over three characters is a provider id and a key
 * id (`01` + `100`); provider `00` or its own is looked up here (its own with Basic client
 * auth), another belongs to a federated provider it does not have.
 */
export function keyServiceAnswer(
  kid: string,
  authorization: string | undefined,
  options: {
    /** security.yml `providerId` of the server (light-oauth2's federation). */
    providerId?: string;
    authenticate(authorization: string | undefined): ClientCheck;
    /** The PEM certificate of one of the server's own key ids. */
    certificate(keyId: string): string | undefined;
  },
): { status: number; contentType: string; body: string } {
  const provider = kid.length < 4 ? undefined : kid.slice(0, 2);
  const keyId = kid.length < 4 ? kid : kid.slice(2);
  const own = provider === undefined || provider === options.providerId;
  if (!own && provider !== '00') return status('ERR12017', kid);
  const client: ClientCheck = own ? options.authenticate(authorization) : { ok: true };
  if (!client.ok) {
    if (client.reason === 'missing') return status('ERR12002');
    if (client.reason === 'unknown-client') return status('ERR12014', client.clientId);
    return status('ERR12007');
  }
  const pem = options.certificate(keyId);
  if (pem === undefined) return status('ERR12030', kid);
  return { status: 200, contentType: 'application/text', body: pem };
}

/** A 404 (but ERR12014: our own client unknown to it), or 400 ERR12030 INVALID_KEY_ID. */
export function isNoSuchKid(statusCode: number, body: string): boolean {
  const code = jsonObject(body)?.code;
  if (statusCode === 404) return code !== 'ERR12014';
  return statusCode === 400 && code === 'ERR12030';
}
