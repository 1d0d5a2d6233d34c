// @ts-check
// A client of an OAuth 2.0 authorization server written as a new user would write it, with
// oauth4webapi (a certified client library, ESM-only: hence a process of its own, which the
// Jest test spawns and reads one JSON line from). It knows the issuer, its own registration
// (client id, secret, redirect URI) and a user's credentials; every endpoint and every choice
// (client authentication, PKCE method, response type) comes from the server's metadata.
//
//   node oauth4webapi-client.mjs '{"issuer":…,"algorithm":"oauth2"|"oidc","clientId":…,
//     "clientSecret":…,"redirectUri":…,"scope":…,"user":…,"password":…,"audience":…}'
//
// Prints {"metadata":…,"authorization":…,"code":…,"refresh":…,"clientCredentials":…} (the
// token answers, each access token's claims as oauth4webapi validated them against jwks_uri),
// or {"error":…} and exits 1. Trusts the dev CA through NODE_EXTRA_CA_CERTS.
import * as oauth from 'oauth4webapi';

const input = JSON.parse(process.argv[2] ?? '{}');

/** @param {string} what @param {boolean} ok */
function expect(what, ok) {
  if (!ok) throw new Error(`the metadata does not offer ${what}`);
}

/** The access token's claims, verified as a resource server would (RFC 9068, keys at jwks_uri). */
async function verified(/** @type {oauth.AuthorizationServer} */ as, /** @type {string} */ jwt) {
  const request = new Request('https://resource.invalid/', {
    headers: { authorization: `Bearer ${jwt}` },
  });
  return oauth.validateJwtAccessToken(as, request, input.audience);
}

/** @param {oauth.AuthorizationServer} as @param {oauth.TokenEndpointResponse} answer */
async function tokens(as, answer) {
  const { access_token: accessToken, ...rest } = answer;
  return { ...rest, claims: await verified(as, accessToken) };
}

async function main() {
  const issuer = new URL(input.issuer);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: input.algorithm }),
  );
  expect(
    'client_secret_basic',
    !!as.token_endpoint_auth_methods_supported?.includes('client_secret_basic'),
  );
  expect('PKCE with S256', !!as.code_challenge_methods_supported?.includes('S256'));
  expect('response_type code', !!as.response_types_supported?.includes('code'));
  expect('an authorization endpoint', typeof as.authorization_endpoint === 'string');
  for (const grant of ['authorization_code', 'refresh_token', 'client_credentials']) {
    expect(`the ${grant} grant`, !!as.grant_types_supported?.includes(grant));
  }
  /** @type {oauth.Client} */
  const client = { client_id: input.clientId };
  const clientAuth = oauth.ClientSecretBasic(input.clientSecret);

  // Authorization code with PKCE: the user agent sends the user's credentials to the advertised
  // authorization endpoint and the code comes back in the redirect's Location.
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorizationUrl = new URL(/** @type {string} */ (as.authorization_endpoint));
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: input.redirectUri,
    scope: input.scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  })) {
    authorizationUrl.searchParams.set(name, value);
  }
  const basic = Buffer.from(`${input.user}:${input.password}`).toString('base64');
  const userAgent = await fetch(authorizationUrl, {
    headers: { authorization: `Basic ${basic}` },
    redirect: 'manual',
  });
  const location = userAgent.headers.get('location');
  if (userAgent.status !== 302 || !location?.startsWith(`${input.redirectUri}?`)) {
    throw new Error(
      `the authorization endpoint answered ${userAgent.status} ${location ?? (await userAgent.text()).slice(0, 200)}, not a redirect to the redirect URI`,
    );
  }
  const params = oauth.validateAuthResponse(as, client, new URL(location), state);
  const code = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      input.redirectUri,
      codeVerifier,
    ),
  );
  if (!code.refresh_token) throw new Error('no refresh token with the code exchange');

  const refresh = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, clientAuth, code.refresh_token),
  );

  const clientCredentials = await oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(
      as,
      client,
      clientAuth,
      new URLSearchParams({ scope: input.scope }),
    ),
  );

  return {
    metadata: as,
    authorization: { status: userAgent.status, parameters: [...params.keys()] },
    code: { ...(await tokens(as, code)), refresh_token: typeof code.refresh_token },
    refresh: { ...(await tokens(as, refresh)), refresh_token: typeof refresh.refresh_token },
    clientCredentials: await tokens(as, clientCredentials),
  };
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (/** @type {Error & { code?: string, cause?: unknown }} */ err) => {
    const cause = err.cause instanceof Response ? err.cause.status : err.cause;
    process.stdout.write(
      `${JSON.stringify({ error: { name: err.name, code: err.code, message: err.message, cause } })}\n`,
    );
    process.exitCode = 1;
  },
);
