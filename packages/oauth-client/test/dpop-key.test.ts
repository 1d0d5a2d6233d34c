import { createHash } from 'node:crypto';
import util from 'node:util';
import { EmbeddedJWK, calculateJwkThumbprint, decodeProtectedHeader, jwtVerify } from 'jose';
import { DpopKey } from '../src/index.js';

const URL_OF_CALL = new URL('https://api-b:7442/v1/data?id=1#part');

describe('DpopKey (RFC 9449 proofs)', () => {
  const key = new DpopKey();
  const seconds = () => Math.floor(Date.now() / 1000);
  /** `iat` is the real clock's, as the servers that check it read theirs. */
  const issuedSince = (before: number, iat: unknown) => {
    expect(iat).toBeGreaterThanOrEqual(before);
    expect(iat).toBeLessThanOrEqual(seconds());
  };

  it('a proof: typ dpop+jwt, ES256, the public jwk only; htm, htu without query and fragment, iat, jti, ath', async () => {
    const before = seconds();
    const proof = await key.proof('GET', URL_OF_CALL, 'the-token');
    // Verified by jose with the key the proof carries, as a DPoP server does.
    const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toEqual({
      alg: 'ES256',
      typ: 'dpop+jwt',
      jwk: { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String) },
    });
    expect(payload).toEqual({
      htm: 'GET',
      htu: 'https://api-b:7442/v1/data',
      iat: expect.any(Number),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      ath: createHash('sha256').update('the-token').digest('base64url'),
    });
    issuedSince(before, payload.iat);
  });

  it('a proof without a token has no ath', async () => {
    const before = seconds();
    const { payload } = await jwtVerify(
      await key.proof('POST', new URL('https://localhost:6882/oauth2/token')),
      EmbeddedJWK,
    );
    expect(payload).toEqual({
      htm: 'POST',
      htu: 'https://localhost:6882/oauth2/token',
      iat: expect.any(Number),
      jti: expect.any(String),
    });
    issuedSince(before, payload.iat);
  });

  it('a new jti for every proof, the same request or not', async () => {
    const proofs = await Promise.all(
      Array.from({ length: 200 }, () => key.proof('GET', URL_OF_CALL, 'the-token')),
    );
    const jtis = proofs.map(
      (p) => JSON.parse(Buffer.from(p.split('.')[1], 'base64url').toString()).jti,
    );
    expect(new Set(jtis).size).toBe(200);
  });

  it('ath follows the token: another token, another hash', async () => {
    const athOf = async (token: string) => {
      const p = await key.proof('GET', URL_OF_CALL, token);
      return JSON.parse(Buffer.from(p.split('.')[1], 'base64url').toString()).ath as string;
    };
    expect(await athOf('token-1')).toBe(createHash('sha256').update('token-1').digest('base64url'));
    expect(await athOf('token-2')).toBe(createHash('sha256').update('token-2').digest('base64url'));
    expect(await athOf('token-1')).toBe(createHash('sha256').update('token-1').digest('base64url'));
  });

  it('its thumbprint is the RFC 7638 thumbprint of the jwk in its proofs; each key its own', async () => {
    const header = decodeProtectedHeader(await key.proof('GET', URL_OF_CALL));
    const { crv, kty, x, y } = header.jwk as Record<string, string>;
    const members = JSON.stringify({ crv, kty, x, y });
    expect(await key.thumbprint()).toBe(createHash('sha256').update(members).digest('base64url'));
    expect(await key.thumbprint()).toBe(await calculateJwkThumbprint(header.jwk!));
    expect(await new DpopKey().thumbprint()).not.toBe(await key.thumbprint());
  });

  it('holds no private member or token where it could be read or logged', async () => {
    await key.proof('GET', URL_OF_CALL, 'secret-token');
    expect(key.jwk).not.toHaveProperty('d');
    expect(JSON.stringify(key)).not.toMatch(/"d"|secret-token/);
    expect(util.inspect(key, { depth: 10 })).not.toMatch(/secret-token|\bd:/);
  });
});
