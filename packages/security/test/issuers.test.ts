import path from 'node:path';
import { CERTS, devSigningKey, mintToken } from '@chain/testkit';
import type { KeySource } from '../src/key-source.js';
import { createVerifier } from '../src/verifier.js';

// security.yml jwt.issuers: the verifier of the token's iss, its keys, audience and paths.
const ONE = 'https://one.example';
const TWO = 'https://two.example';
const primary = devSigningKey('100');
const secondary = devSigningKey('101');
const token = (key: typeof primary, iss: unknown, aud: unknown = 'aud-' + String(iss)) =>
  mintToken(key, { claims: { iss, aud } });

function verifierOf(issuers: Record<string, unknown>, cache = true) {
  const asked: string[] = [];
  // As the runtime's: a source for an issuer that names a key server.
  const keySourceOf = (issuer: string): KeySource | undefined =>
    (issuers[issuer] as { key?: unknown }).key === undefined
      ? undefined
      : {
          kind: 'kid',
          fetch: (kid) => {
            asked.push(`${issuer} ${kid}`);
            return Promise.resolve(undefined);
          },
        };
  const verifier = createVerifier({
    config: {
      enableVerifyJwt: true,
      enableVerifyScope: false,
      enableJwtCache: cache,
      jwt: { issuers },
    },
    keySourceOf,
  });
  const send = async (jwt: string, route = '/v1/data') => {
    const verdict = await verifier.verify({
      method: 'GET',
      path: route,
      headers: { authorization: `Bearer ${jwt}` },
      requiredScopes: [],
    });
    return verdict.ok ? 'ok' : `${verdict.refusal.status} ${verdict.refusal.error.code}`;
  };
  return { asked, send };
}

const TWO_ISSUERS = {
  [ONE]: { audience: 'aud-' + ONE, certificate: { '100': path.join(CERTS, 'primary.crt') } },
  [TWO]: {
    audience: ['aud-' + TWO, 'other'],
    certificate: { '101': path.join(CERTS, 'secondary.crt') },
    pathPrefixes: ['/v1/data'],
  },
};

describe.each([
  ['cached', true],
  ['uncached', false],
])('jwt.issuers, %s', (_name, cache) => {
  it("accepts each issuer's token with its own keys and audience, not another's", async () => {
    const { send, asked } = verifierOf(TWO_ISSUERS, cache);
    expect(await send(token(primary, ONE))).toBe('ok');
    expect(await send(token(secondary, TWO))).toBe('ok');
    // A key of the other issuer, an audience of the other issuer.
    expect(await send(token(secondary, ONE))).toBe('401 ERR10000');
    expect(await send(token(primary, ONE, 'aud-' + TWO))).toBe('401 ERR10000');
    expect(asked).toEqual([]);
  });

  it('refuses an issuer outside its pathPrefixes, cached or not; by whole segments', async () => {
    const { send } = verifierOf(TWO_ISSUERS, cache);
    const two = token(secondary, TWO);
    expect(await send(two, '/v1/data/7')).toBe('ok');
    expect(await send(two, '/v1/reports')).toBe('401 ERR10000');
    expect(await send(two, '/v1/database')).toBe('401 ERR10000');
    expect(await send(token(primary, ONE), '/v1/reports')).toBe('ok');
  });

  it('refuses an iss not listed, or none, before any key look-up', async () => {
    const { send, asked } = verifierOf(
      { [ONE]: { key: { server_url: 'https://k.example' } } },
      cache,
    );
    expect(await send(token(primary, ONE))).toBe('401 ERR10000');
    expect(asked).toEqual([`${ONE} 100`]);
    for (const iss of [TWO, 'https://one.example/', undefined, 7, [ONE]]) {
      expect(await send(token({ ...primary, kid: 'other' }, iss, 'aud'))).toBe('401 ERR10000');
    }
    expect(await send('not.a.jwt')).toBe('401 ERR10000');
    expect(asked).toEqual([`${ONE} 100`]);
  });
});

describe('jwt.issuers in security.yml', () => {
  const start = (issuers: unknown) => () =>
    createVerifier({ config: { enableVerifyJwt: true, jwt: { issuers } } });

  it.each([
    [{ [ONE]: {} }, `"jwt.issuers.${ONE}": names no certificate and no key server`],
    [
      { [ONE]: { audiences: 'a', key: { server_url: 'https://k' } } },
      `"jwt.issuers.${ONE}.audiences": unknown key`,
    ],
    [
      { [ONE]: { key: { server_url: 'k.example' } } },
      `"jwt.issuers.${ONE}.key.server_url": Invalid URL`,
    ],
    [
      { [ONE]: { key: { server_url: 'https://k', jwks: true } } },
      `"jwt.issuers.${ONE}.key.jwks": unknown key`,
    ],
    [
      { [ONE]: { key: { server_url: 'https://k' }, pathPrefixes: ['v1'] } },
      `"jwt.issuers.${ONE}.pathPrefixes.0": a path prefix starts with /`,
    ],
    [
      { [ONE]: { certificate: { '100': 'missing.crt' } } },
      `"jwt.issuers.${ONE}.certificate.100": file not found: ${path.resolve('missing.crt')}`,
    ],
  ])('refuses %j at start, naming the file and key', (issuers, message) => {
    expect(start(issuers)).toThrow(`Config error in security.yml at key ${message}`);
  });
});
