/**
 * jose with `compactVerify` counted (a jest.fn around the real one), for
 * `jest.mock('jose', () => jest.requireActual('./counted-jose').countedJose())`: this module
 * imports nothing, so the real jose is what it wraps.
 */
export function countedJose() {
  const actual = jest.requireActual<typeof import('jose')>('jose');
  return { ...actual, compactVerify: jest.fn(actual.compactVerify) };
}
