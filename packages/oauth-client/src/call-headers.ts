/**
 * The credentials a service with security on sends downstream (light-4j's chain): the caller's
 * `Authorization` unchanged plus `X-Scope-Token: Bearer <own token>`; its own token in
 * `Authorization` when the caller sent none.
 */
export function credentialHeaders(
  callerAuthorization: string | undefined,
  ownToken: string,
): Record<string, string> {
  if (callerAuthorization) {
    return { Authorization: callerAuthorization, 'X-Scope-Token': `Bearer ${ownToken}` };
  }
  return { Authorization: `Bearer ${ownToken}` };
}
