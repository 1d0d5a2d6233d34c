import type { KeyMaterial } from './public-key';

/** One key of a key set, with the `alg` its JWK pins (if any). */
export interface FetchedKey {
  material: KeyMaterial;
  alg?: string;
}

/**
 * Where keys of kids the certificates do not hold come from (client.yml `oauth.key`). `kid`:
 * light-oauth2's PEM by kid, undefined when the server has no such kid, rejecting when it cannot
 * be asked. `set`: a JWKS, every key at once.
 */
export type KeySource =
  | { kind: 'kid'; fetch(kid: string): Promise<KeyMaterial | undefined> }
  | { kind: 'set'; fetch(): Promise<ReadonlyMap<string, FetchedKey>> };

/** What the key store and the request guard write to (a pino logger fits). */
export interface Logger {
  info(record: object, message: string): void;
  warn(record: object, message: string): void;
}
