export {
  createSigningKey,
  loadSigningKey,
  writeCertificate,
  type KeyType,
  type SigningAlgorithm,
  type SigningKey,
} from './signing-key';
export {
  LOCAL_AUDIENCE,
  LOCAL_ISSUER,
  b64url,
  mintToken,
  signToken,
  signWith,
  standardClaims,
  type ClaimOptions,
  type Claims,
} from './token';
export { hostileTokens, type HostileToken } from './hostile-tokens';
export { KeyServer, startKeyServer, type KeyServerMode, type KeyServerOptions } from './key-server';
export {
  accessTokenHash,
  certificateBound,
  certificateThumbprint,
  createDpopKey,
  dpopBound,
  dpopProof,
  jwkThumbprint,
  type DpopKey,
  type ProofOptions,
} from './bound-tokens';
