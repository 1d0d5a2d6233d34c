import { errorBody, refusalCode } from '../src/status.js';
import { StatusError, wwwAuthenticate } from '../src/status-error.js';

const ALGS = ['ES256', 'PS256'];
const dpop = { scheme: 'dpop', dpopAlgorithms: ALGS } as const;

describe('wwwAuthenticate: the DPoP challenges (RFC 9449 sections 7.1 and 7.2)', () => {
  it('a refusal of the DPoP scheme: the DPoP challenge with the error, then bare Bearer', () => {
    expect(wwwAuthenticate(errorBody('ERR20013'), dpop)).toBe(
      'DPoP realm="api", error="invalid_dpop_proof", error_description="DPoP proof of the token in authorization header is missing or invalid", algs="ES256 PS256", Bearer realm="api"',
    );
    expect(wwwAuthenticate(errorBody('ERR20014'), dpop)).toMatch(
      /^DPoP realm="api", error="invalid_dpop_proof", /,
    );
    for (const code of ['ERR10000', 'ERR10001', 'ERR20012', 'ERR10002'] as const) {
      expect(wwwAuthenticate(errorBody(code), dpop)).toMatch(
        /^DPoP realm="api", error="invalid_token", error_description="[^"]+", algs="ES256 PS256", Bearer realm="api"$/,
      );
    }
  });

  it('a 403 of the DPoP scheme: insufficient_scope, the scopes when there are some', () => {
    const body = { ...errorBody('ERR10005'), description: 'a "quoted" \\ b' };
    expect(wwwAuthenticate(body, { ...dpop, requiredScopes: ['r', 'w'] })).toBe(
      'DPoP realm="api", error="insufficient_scope", error_description="a quoted  b", scope="r w", algs="ES256 PS256", Bearer realm="api"',
    );
    for (const requiredScopes of [[], ['']]) {
      expect(wwwAuthenticate(body, { ...dpop, requiredScopes })).toBe(
        'DPoP realm="api", error="insufficient_scope", error_description="a quoted  b", algs="ES256 PS256", Bearer realm="api"',
      );
    }
  });

  it('a DPoP-bound token sent as Bearer: the Bearer error, then how to present it', () => {
    const bound = { scheme: 'bearer', dpopBound: true, dpopAlgorithms: ALGS } as const;
    expect(wwwAuthenticate(errorBody('ERR20012'), bound)).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Token in authorization header is bound to a client certificate or DPoP key that the request does not prove", DPoP realm="api", algs="ES256 PS256"',
    );
  });

  it("any other Bearer refusal has the catalogue's RFC 6750 challenge; no status but 401 and 403 has one", () => {
    expect(wwwAuthenticate(errorBody('ERR20012'), { scheme: 'bearer' })).toBe(
      new StatusError('ERR20012').headers['WWW-Authenticate'],
    );
    expect(wwwAuthenticate(errorBody('ERR20013'))).toBe(
      'Bearer realm="api", error="invalid_token", error_description="DPoP proof of the token in authorization header is missing or invalid"',
    );
    expect(wwwAuthenticate(errorBody('ERR10002'))).toBe('Bearer realm="api"');
    expect(wwwAuthenticate(errorBody('ERR10005'), { requiredScopes: [''] })).toMatch(/, scope=""$/);
    expect(wwwAuthenticate(errorBody('ERR20005'), dpop)).toBeUndefined();
    expect(wwwAuthenticate(errorBody('ERR10007'), dpop)).toBeUndefined();
    expect(wwwAuthenticate({ ...errorBody('ERR10000'), code: 'ERR99999' })).toBeUndefined();
  });
});

describe('refusalCode: the code of a refused token', () => {
  it.each([
    ['auth', 'invalid', 'ERR10000'],
    ['auth', 'expired', 'ERR10001'],
    ['auth', 'inactive', 'ERR10081'],
    ['scope', 'invalid', 'ERR10003'],
    ['scope', 'expired', 'ERR10004'],
    ['scope', 'inactive', 'ERR10003'],
    ['auth', 'unbound', 'ERR20012'],
    ['scope', 'proof', 'ERR20013'],
    ['scope', 'replayed', 'ERR20014'],
  ] as const)('%s %s: %s', (header, reason, code) => {
    expect(refusalCode(header, reason)).toBe(code);
  });
});
