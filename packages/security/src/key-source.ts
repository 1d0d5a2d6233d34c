import type { KeyMaterial } from './public-key.js';

/** Milliseconds since the epoch; injected so tests freeze or move time. */
export type Clock = () => number;

export interface FetchedKey {
  material: KeyMaterial;
  alg?: string;
}

/** client.yml `oauth.key`: `kid` resolves undefined when the server has no such kid. */
export type KeySource =
  | { kind: 'kid'; fetch(kid: string): Promise<KeyMaterial | undefined> }
  | { kind: 'set'; fetch(): Promise<ReadonlyMap<string, FetchedKey>> };

export interface Logger {
  info(record: object, message: string): void;
  warn(record: object, message: string): void;
}
