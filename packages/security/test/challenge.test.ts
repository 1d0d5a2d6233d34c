import { errorBody } from '@chain/errors';
import { bindingChallenge } from '../src/challenge.js';

const ALGS = ['ES256', 'PS256'];

describe('bindingChallenge (RFC 9449 sections 7.1 and 7.2)', () => {
  it('a refusal of the DPoP scheme: the DPoP challenge with the error, then bare Bearer', () => {
    expect(bindingChallenge('dpop', errorBody('ERR20013'), ALGS, {})).toEqual({
      'WWW-Authenticate':
        'DPoP realm="api", error="invalid_dpop_proof", error_description="DPoP proof of the token in authorization header is missing or invalid", algs="ES256 PS256", Bearer realm="api"',
    });
    expect(bindingChallenge('dpop', errorBody('ERR20014'), ALGS, {})!['WWW-Authenticate']).toMatch(
      /^DPoP realm="api", error="invalid_dpop_proof", /,
    );
    for (const code of ['ERR10000', 'ERR10001', 'ERR20012'] as const) {
      expect(bindingChallenge('dpop', errorBody(code), ALGS, {})!['WWW-Authenticate']).toMatch(
        /^DPoP realm="api", error="invalid_token", error_description="[^"]+", algs="ES256 PS256", Bearer realm="api"$/,
      );
    }
  });

  it('a 403 of the DPoP scheme: insufficient_scope, the scopes when there are some', () => {
    const body = {
      statusCode: 403,
      code: 'ERR10005',
      message: 'M',
      description: 'a "quoted" \\ b',
    };
    expect(bindingChallenge('dpop', body, ALGS, { requiredScopes: ['r', 'w'] })).toEqual({
      'WWW-Authenticate':
        'DPoP realm="api", error="insufficient_scope", error_description="a quoted  b", scope="r w", algs="ES256 PS256", Bearer realm="api"',
    });
    expect(bindingChallenge('dpop', body, ALGS, { requiredScopes: [] })).toEqual({
      'WWW-Authenticate':
        'DPoP realm="api", error="insufficient_scope", error_description="a quoted  b", algs="ES256 PS256", Bearer realm="api"',
    });
  });

  it('a DPoP-bound token sent as Bearer: the Bearer error, then how to present it', () => {
    expect(bindingChallenge('bearer', errorBody('ERR20012'), ALGS, { dpopBound: true })).toEqual({
      'WWW-Authenticate':
        'Bearer realm="api", error="invalid_token", error_description="Token in authorization header is bound to a client certificate or DPoP key that the request does not prove", DPoP realm="api", algs="ES256 PS256"',
    });
  });

  it("any other Bearer refusal keeps the catalogue's challenge; no status but 401 and 403 has one", () => {
    expect(bindingChallenge('bearer', errorBody('ERR20012'), ALGS, {})).toBeUndefined();
    expect(bindingChallenge('bearer', errorBody('ERR10000'), ALGS, {})).toBeUndefined();
    expect(bindingChallenge('dpop', errorBody('ERR20005'), ALGS, {})).toBeUndefined();
    expect(bindingChallenge('dpop', errorBody('ERR10007'), ALGS, {})).toBeUndefined();
  });
});
