import { invalidToken } from './token-error';

/**
 * The confirmation (RFC 7800 `cnf`) of an introspection answer, checked against the request's
 * connection (RFC 8705 section 3.2 for introspection): no `cnf`, or an empty one, binds nothing;
 * `x5t#S256` must equal the thumbprint of the client certificate of the connection
 * (`clientCertThumbprint`: none without two-way TLS, which fails it); `jkt` (a DPoP-bound token,
 * RFC 9449) fails, for a token sent as `Bearer` is refused whatever its proof; any other member
 * is a confirmation method not checked here, and fails too. Throws an invalid-token refusal.
 */
export function checkIntrospectedBinding(cnf: unknown, clientCertThumbprint?: string): void {
  if (cnf === undefined) return;
  if (cnf === null || typeof cnf !== 'object' || Array.isArray(cnf)) {
    throw invalidToken('introspection answered a cnf that is not an object');
  }
  for (const [method, value] of Object.entries(cnf)) {
    if (method === 'x5t#S256') {
      if (clientCertThumbprint === undefined) {
        throw invalidToken('certificate-bound token without a client certificate');
      }
      if (value !== clientCertThumbprint) {
        throw invalidToken('certificate-bound token from another client certificate');
      }
    } else if (method === 'jkt') {
      throw invalidToken('DPoP-bound token sent as Bearer');
    } else {
      throw invalidToken('token bound by a confirmation method not checked here');
    }
  }
}
