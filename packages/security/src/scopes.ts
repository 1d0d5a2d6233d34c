import type { JwtClaims } from './claims';

/**
 * The scopes a token holds: claim `scope` as a JSON array or a space-separated string, else
 * `scp` in either form, else none.
 */
export function tokenScopes(claims: JwtClaims): string[] {
  return asScopes(claims.scope) ?? asScopes(claims.scp) ?? [];
}

function asScopes(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return undefined;
}

/** light-4j's rule: the request passes when the operation lists no scope or the token holds any one. */
export function hasAnyScope(held: readonly string[], required: readonly string[]): boolean {
  return required.length === 0 || required.some((scope) => held.includes(scope));
}

/** Java's List.toString, as light-4j's descriptions print scopes: `[a, b]`. */
export function formatScopes(scopes: readonly string[]): string {
  return `[${scopes.join(', ')}]`;
}
