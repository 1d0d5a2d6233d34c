import type * as Jose from 'jose';

/**
 * jose with `compactVerify` and `EmbeddedJWK` counted (a vi.fn around each real one), for
 * `vi.mock('jose', async (original) => (await import('./counted-jose.js')).countedJose(original))`.
 */
export async function countedJose(original: <T>() => Promise<T>) {
  const actual = await original<typeof Jose>();
  return {
    ...actual,
    compactVerify: vi.fn(actual.compactVerify),
    EmbeddedJWK: vi.fn(actual.EmbeddedJWK),
  };
}
