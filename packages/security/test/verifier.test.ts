import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { CERTS, configDir, devSigningKey, jwtSecurityYml, mintToken } from '@chain/testkit';
import { securityConfigSchema } from '../src/security-config.js';
import {
  clientCertificateThumbprint,
  createVerifier,
  loadSecurityConfig,
  type VerifyRequest,
} from '../src/verifier.js';
import { recordedEvents } from './helpers.js';

const primary = devSigningKey('100');
const good = mintToken(primary, { scope: ['pets.r'], clientId: 'c1', claims: { tenant: 't9' } });
const CERTIFICATE = { '100': path.join(CERTS, 'primary.crt') };
const ON = { enableVerifyJwt: true, jwt: { certificate: CERTIFICATE } };

const request = (headers: VerifyRequest['headers'], extra: Partial<VerifyRequest> = {}) => ({
  method: 'GET',
  path: '/pets?q=1',
  headers,
  requiredScopes: ['pets.r'],
  ...extra,
});

describe('createVerifier: security.yml as a file, as parsed keys, as the services load it', () => {
  const yml = jwtSecurityYml({ kids: ['100'], keys: { logJwtToken: false } });
  const dir = configDir({ 'security.yml': yml, 'auth.yaml': yml });

  it.each([
    ['a file path', path.join(dir, 'security.yml')],
    ['a .yaml file of another name', path.join(dir, 'auth.yaml')],
    ['parsed keys', ON],
  ])('from %s: the same verdicts', async (_name, config) => {
    const verifier = createVerifier({ config });
    expect(verifier.verifies).toBe(true);
    const ok = await verifier.verify(request({ authorization: `Bearer ${good}` }));
    expect(ok).toMatchObject({ ok: true, auth: { clientId: 'c1', scopes: ['pets.r'] } });
    const refused = await verifier.verify(request({}));
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.refusal.status).toBe(401);
  });

  it('takes a config the services loaded as it is', () => {
    const loaded = new ConfigLoader({ bundledDir: dir, overrideDir: dir, env: {} }).load(
      'security',
      securityConfigSchema,
    );
    expect(loadSecurityConfig(loaded)).toBe(loaded);
    expect(createVerifier({ config: loaded }).config).toBe(loaded);
    // A copy (without the keys the schema read) is checked again: only the schema's own object
    // is trusted.
    const { certificates, ...copy } = loaded;
    expect(certificates?.size).toBe(1);
    const checked = loadSecurityConfig(copy);
    expect(checked).not.toBe(loaded);
    expect(checked.certificates).toEqual(certificates);
  });

  it("refuses a bad file or bad keys with the services' messages", () => {
    const unknown = { ...ON, enableVerifyJWT: true };
    expect(() => createVerifier({ config: unknown })).toThrow(
      'Config error in security.yml at key "enableVerifyJWT": unknown key; did you mean "enableVerifyJwt"?',
    );
    const missing = path.join(dir, 'nothing.yml');
    expect(() => createVerifier({ config: missing })).toThrow(
      `Config error in ${missing}: file not found in the config folders`,
    );
    const bad = configDir({ 'security.yml': 'enableVerifyJwt: yes please\n' });
    expect(() => createVerifier({ config: path.join(bad, 'security.yml') })).toThrow(
      `Config error in ${bad}/security.yml at key "enableVerifyJwt": expected boolean, received string`,
    );
  });

  it("says a light-4j key's warning to the logger, as a service does", () => {
    const { events: logger, lines } = recordedEvents();
    createVerifier({ config: { ...ON, enableH2c: true }, logger });
    expect(lines).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(/^security\.yml key "enableH2c": /),
        record: { file: 'security.yml', key: 'enableH2c' },
      },
    ]);
  });
});

describe('Verifier.verify', () => {
  const passThroughClaims = { tenant: 'X-Tenant' };

  it('sets the pass-through headers from the verified claims, never from the caller', async () => {
    const verifier = createVerifier({ config: { ...ON, passThroughClaims } });
    const headers = { authorization: `Bearer ${good}`, 'x-tenant': 'admin' };
    await verifier.verify(request(headers));
    expect(headers).toEqual({ authorization: `Bearer ${good}`, 'x-tenant': 't9' });
    const refused = { 'x-tenant': 'admin' };
    await verifier.verify(request(refused));
    expect(refused).toEqual({});
  });

  it('with verification off: passes unverified, removing the pass-through headers', async () => {
    const verifier = createVerifier({ config: { passThroughClaims } });
    expect(verifier.verifies).toBe(false);
    const headers = { 'x-tenant': 'admin', accept: '*/*' };
    expect(await verifier.verify(request(headers))).toEqual({ ok: true, auth: undefined });
    expect(headers).toEqual({ accept: '*/*' });
  });

  it('removes the SWT client headers', async () => {
    const verifier = createVerifier({
      config: { ...ON, enableVerifySwt: true },
      introspection: { introspect: () => Promise.reject(new Error('not asked')) },
    });
    const headers = { authorization: `Bearer ${good}`, 'swt-client': 'c', 'swt-secret': 's' };
    expect((await verifier.verify(request(headers))).ok).toBe(true);
    expect(headers).toEqual({ authorization: `Bearer ${good}` });
  });

  it('cuts the query off the path: ERR10007 names the path alone', async () => {
    const verifier = createVerifier({ config: ON });
    const verdict = await verifier.verify(
      request({ authorization: `Bearer ${good}` }, { requiredScopes: undefined }),
    );
    expect(verdict.ok === false && verdict.refusal.body).toBe(
      '{"statusCode":404,"code":"ERR10007","message":"INVALID_REQUEST_PATH","description":"Request path /pets cannot be found in the spec."}',
    );
  });

  it('answers a 403 with its verified caller, the refusal as the services send it', async () => {
    const verifier = createVerifier({ config: ON });
    const verdict = await verifier.verify(
      request({ authorization: `Bearer ${good}` }, { requiredScopes: ['pets.w'] }),
    );
    const description =
      'Scopes [pets.r] in authorization token and specification scopes [pets.w] are not matched';
    expect(verdict).toMatchObject({
      ok: false,
      auth: { clientId: 'c1' },
      refusal: {
        status: 403,
        headers: {
          'Content-Type': 'application/json',
          'WWW-Authenticate': `Bearer realm="api", error="insufficient_scope", error_description="${description}", scope="pets.w"`,
        },
        body: JSON.stringify({
          statusCode: 403,
          code: 'ERR10005',
          message: 'AUTH_TOKEN_SCOPE_MISMATCH',
          description,
        }),
      },
    });
  });

  it('never rejects: an unexpected failure is 500 ERR10010, its cause kept, nothing leaked', async () => {
    const failing = {
      info: () => {
        throw new TypeError('audit sink broke');
      },
      warn: () => undefined,
    };
    const verifier = createVerifier({ config: ON, logger: failing });
    const verdict = await verifier.verify(request({ authorization: `Bearer ${good}` }));
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.refusal.status).toBe(500);
    expect(verdict.refusal.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(JSON.parse(verdict.refusal.body)).toEqual({
      statusCode: 500,
      code: 'ERR10010',
      message: 'RUNTIME_EXCEPTION',
      description: 'Unexpected runtime exception',
    });
    expect((verdict.refusal.error.cause as Error).message).toBe('audit sink broke');
  });
});

describe('clientCertificateThumbprint', () => {
  const raw = Buffer.from('certificate bytes');
  const socket = (authorized: boolean) => {
    const getPeerX509Certificate = vi.fn(() => ({ raw }));
    return { authorized, getPeerX509Certificate } as never;
  };

  it("is the SHA-256 of a verified certificate's DER, base64url, computed once a connection", () => {
    const tls = socket(true);
    const expected = 'Imm1jEMBLvxZsFRPhwKz_dX7qdpdOMjqsZP29I3mJVY';
    expect(clientCertificateThumbprint(tls)).toBe(expected);
    expect(clientCertificateThumbprint(tls)).toBe(expected);
    expect(
      (tls as { getPeerX509Certificate: () => void }).getPeerX509Certificate,
    ).toHaveBeenCalledTimes(1);
  });

  it('is undefined without TLS, or for a certificate the server did not verify', () => {
    expect(clientCertificateThumbprint(undefined)).toBeUndefined();
    expect(clientCertificateThumbprint({} as never)).toBeUndefined();
    expect(clientCertificateThumbprint(socket(false))).toBeUndefined();
    expect(clientCertificateThumbprint({ authorized: true } as never)).toBeUndefined();
    const none = { authorized: true, getPeerX509Certificate: () => undefined };
    expect(clientCertificateThumbprint(none as never)).toBeUndefined();
  });
});
