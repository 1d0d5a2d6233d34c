import { X509Certificate, createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { HttpClient } from '@chain/http';
import { TokenManager, clientConfigSchema } from '@chain/oauth-client';
import {
  CERTS,
  claimsOf,
  configDir,
  postForm,
  startExpectingFailure,
  startTokenServer,
  tokenServerYml,
  type TokenServerProcess,
} from '@chain/testkit';

// Sender-constrained tokens over real HTTPS against the built server (dist/): certificate-bound
// (RFC 8705, tls_client_auth) and DPoP-bound (RFC 9449). The thumbprints and the proofs are made
// here with node:crypto alone, independently of the server's and of @chain/oauth-client's code.
const CLIENT_CERTS = path.join(CERTS, 'clients');
const DN = (cn: string) => `CN=${cn},O=secured-rest-chain dev`;
const CLIENTS = `clients:
  api-a-client:
    tokenEndpointAuthMethod: tls_client_auth
    tlsClientAuthSubjectDn: ${DN('api-a')}
    certificateBoundAccessTokens: true
    scope: [api_b.r]
  secret-bound:
    secret: secret-bound-secret
    certificateBoundAccessTokens: true
    scope: [api_b.r]
  chain-client:
    tokenEndpointAuthMethod: tls_client_auth
    tlsClientAuthSubjectDn: ${DN('chain-client')}
    scope: [api_b.r]
  plain:
    secret: plain-secret
    scope: [api_b.r]
  dpop-client:
    secret: dpop-secret
    dpopBoundAccessTokens: true
    scope: [api_c.r]
`;
const ENABLED = `mtls:
  enabled: true
  caFile: ${CLIENT_CERTS}/ca.crt
dpop:
  enabled: true
`;

const pemOf = (file: string) => fs.readFileSync(file);
const certificate = (name: string) => {
  const pem = pemOf(path.join(CLIENT_CERTS, `${name}.pem`));
  return { key: pem, cert: pem };
};
/** RFC 8705 3.1: base64url of the SHA-256 of the DER certificate (from Node's fingerprint). */
const x5t = (file: string) =>
  Buffer.from(new X509Certificate(pemOf(file)).fingerprint256.replace(/:/g, ''), 'hex').toString(
    'base64url',
  );
const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

/** An ES256 key pair for DPoP, its public JWK and its RFC 7638 thumbprint. */
function dpopKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as {
    kty: string;
    crv: string;
    x: string;
    y: string;
  };
  const members = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  const thumbprint = createHash('sha256').update(members).digest('base64url');
  return { privateKey, jwk, thumbprint };
}

/** A DPoP proof JWT (RFC 9449 4.2) signed with node:crypto. */
function proof(
  key: ReturnType<typeof dpopKey>,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${part({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...header })}.${part({
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    ...claims,
  })}`;
  const signature = sign('sha256', Buffer.from(input), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return `${input}.${signature.toString('base64url')}`;
}

describe('sender-constrained tokens (a real process over HTTPS)', () => {
  let ts: TokenServerProcess;
  let endpoint: string;
  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml(ENABLED),
      files: { 'clients.yml': CLIENTS },
    });
    endpoint = `${ts.tokenUrl}/oauth2/token`;
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  describe('certificate-bound (RFC 8705)', () => {
    it('a tls_client_auth client with its certificate gets a token bound to it', async () => {
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials', client_id: 'api-a-client' },
        {},
        certificate('api-a'),
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        access_token: expect.any(String),
        expires_in: 600,
        token_type: 'Bearer',
        scope: 'api_b.r',
      });
      const claims = claimsOf(answer.body.access_token as string);
      expect(claims).toMatchObject({ client_id: 'api-a-client', scope: 'api_b.r' });
      expect(claims.cnf).toEqual({ 'x5t#S256': x5t(path.join(CLIENT_CERTS, 'api-a.crt')) });
    });

    it.each([
      ['without a certificate', undefined],
      ['with the certificate of another subject (api-b)', 'api-b'],
    ])('%s: 401 invalid_client', async (_what, name) => {
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials', client_id: 'api-a-client' },
        {},
        name ? certificate(name) : undefined,
      );
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    });

    it('a certificate of the right subject but not of the client CA: 401 invalid_client', async () => {
      // certs/client.pem (CN=chain-client) is signed by the servers' CA, not the client CA.
      const pem = pemOf(path.join(CERTS, 'client.pem'));
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials', client_id: 'chain-client' },
        {},
        { key: pem, cert: pem },
      );
      expect([answer.status, answer.body.error]).toEqual([401, 'invalid_client']);
    });

    it('a secret is not a certificate: a tls_client_auth client sending one is refused', async () => {
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        { Authorization: basic('api-a-client', 'anything') },
        certificate('api-a'),
      );
      expect([answer.status, answer.body.error]).toEqual([401, 'invalid_client']);
    });

    it('a client authenticated by its secret and registered for bound tokens: bound to the certificate it presents', async () => {
      const auth = { Authorization: basic('secret-bound', 'secret-bound-secret') };
      const bound = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        auth,
        certificate('api-b'),
      );
      expect(bound.status).toBe(200);
      expect(claimsOf(bound.body.access_token as string).cnf).toEqual({
        'x5t#S256': x5t(path.join(CLIENT_CERTS, 'api-b.crt')),
      });
      const without = await postForm(endpoint, { grant_type: 'client_credentials' }, auth);
      expect(without.status).toBe(400);
      expect(without.body).toEqual({
        error: 'invalid_grant',
        error_description: 'grant request is invalid',
      });
    });

    it('the handshake asks every client for a certificate of the client CA and requires none', () => {
      const { port } = new URL(ts.tokenUrl);
      // TLS 1.2: OpenSSL prints the CertificateRequest's CA names (sent in the clear there).
      const out = execFileSync(
        'openssl',
        [
          's_client',
          '-connect',
          `127.0.0.1:${port}`,
          '-CAfile',
          path.join(CERTS, 'ca.crt'),
          '-tls1_2',
        ],
        { input: '', encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] },
      );
      const asked = /Acceptable client certificate CA names\n(.*)\n/.exec(out)?.[1];
      expect(asked).toBe('O = secured-rest-chain dev, CN = secured-rest-chain dev client CA');
      expect(out).toMatch(/Verify return code: 0 \(ok\)/);
    });

    it("a secret client presenting a certificate (the local run's curl lines) gets a Bearer token, unbound", async () => {
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        { Authorization: basic('plain', 'plain-secret') },
        certificate('client'),
      );
      expect(answer.status).toBe(200);
      expect(answer.body.token_type).toBe('Bearer');
      expect(claimsOf(answer.body.access_token as string).cnf).toBeUndefined();
    });

    it('a client without a certificate and not registered for one is served as before: a Bearer token, no cnf', async () => {
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        { Authorization: basic('plain', 'plain-secret') },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.token_type).toBe('Bearer');
      expect(claimsOf(answer.body.access_token as string).cnf).toBeUndefined();
    });
  });

  describe('DPoP-bound (RFC 9449)', () => {
    const auth = { Authorization: basic('dpop-client', 'dpop-secret') };

    it('a token request with a proof gets token_type DPoP and cnf.jkt, the key’s RFC 7638 thumbprint', async () => {
      const key = dpopKey();
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        {
          ...auth,
          DPoP: proof(key, { htm: 'POST', htu: endpoint }),
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        access_token: expect.any(String),
        expires_in: 600,
        token_type: 'DPoP',
        scope: 'api_c.r',
      });
      expect(claimsOf(answer.body.access_token as string).cnf).toEqual({ jkt: key.thumbprint });
    });

    it('a replayed proof is refused', async () => {
      const key = dpopKey();
      const once = proof(key, { htm: 'POST', htu: endpoint });
      const first = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        { ...auth, DPoP: once },
      );
      expect(first.status).toBe(200);
      const again = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        { ...auth, DPoP: once },
      );
      expect(again.status).toBe(400);
      expect(again.body).toEqual({
        error: 'invalid_grant',
        error_description: 'grant request is invalid',
      });
    });

    it.each([
      ['another htu', { htm: 'POST', htu: 'https://localhost:1/oauth2/token' }, {}],
      ['another htm', { htm: 'GET', htu: '' }, {}],
      ['an iat out of the window', { htm: 'POST', htu: '', iat: 1_000_000_000 }, {}],
      ['another typ', { htm: 'POST', htu: '' }, { typ: 'JWT' }],
    ])('a proof with %s: 400 invalid_dpop_proof', async (_what, claims, header) => {
      const key = dpopKey();
      const c = { ...claims, htu: claims.htu || endpoint };
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        {
          ...auth,
          DPoP: proof(key, c, header),
        },
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_dpop_proof');
    });

    it('a proof signed by another key than the one it carries: 400 invalid_dpop_proof', async () => {
      const key = dpopKey();
      const other = dpopKey();
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        {
          ...auth,
          DPoP: proof({ ...key, privateKey: other.privateKey }, { htm: 'POST', htu: endpoint }),
        },
      );
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_dpop_proof']);
    });

    it('a client registered for DPoP-bound tokens without a proof: 400 invalid_grant', async () => {
      const answer = await postForm(endpoint, { grant_type: 'client_credentials' }, auth);
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('any client may ask for a DPoP-bound token with a proof', async () => {
      const key = dpopKey();
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials' },
        {
          Authorization: basic('plain', 'plain-secret'),
          DPoP: proof(key, { htm: 'POST', htu: endpoint }),
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.token_type).toBe('DPoP');
      expect(claimsOf(answer.body.access_token as string).cnf).toEqual({ jkt: key.thumbprint });
    });

    it('a certificate-bound client with a proof: one binding only, refused', async () => {
      const key = dpopKey();
      const answer = await postForm(
        endpoint,
        { grant_type: 'client_credentials', client_id: 'api-a-client' },
        { DPoP: proof(key, { htm: 'POST', htu: endpoint }) },
        certificate('api-a'),
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
    });
  });

  it('logs the client of a tls_client_auth request (from the form), never a token', () => {
    const requests = ts.lines.filter((l) => l.includes('"msg":"token request"'));
    expect(requests.some((l) => l.includes('"clientId":"api-a-client"'))).toBe(true);
    const listening = ts.lines.find((l) => l.includes('"endpoint":"token"'));
    expect(JSON.parse(listening!)).toMatchObject({ mtls: true, dpop: true });
    for (const line of ts.lines) expect(line).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });
});

describe('@chain/oauth-client obtains bound tokens from the real server', () => {
  let ts: TokenServerProcess;
  beforeAll(async () => {
    ts = await startTokenServer({
      yml: tokenServerYml(ENABLED),
      files: { 'clients.yml': CLIENTS },
    });
  });
  afterAll(async () => {
    expect(await ts.stop()).toBe(0);
  });

  /** client.yml as the service reads it (JSON is YAML), and its token manager. */
  const managerOf = (cc: Record<string, unknown>, keyStore?: string) => {
    const dir = configDir({
      'client.yml': JSON.stringify({
        tls: {
          trustStore: path.join(CERTS, 'ca.crt'),
          ...(keyStore ? { loadKeyStore: true, keyStore } : {}),
        },
        oauth: {
          token: { server_url: ts.tokenUrl, client_credentials: { uri: '/oauth2/token', ...cc } },
        },
      }),
    });
    const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
    const client = loader.load('client', clientConfigSchema);
    const http = new HttpClient(client);
    const secret = { clientCredentialsClientSecret: 'dpop-secret' };
    return { manager: new TokenManager({ client, secret, http }), http };
  };

  it('tokenBinding mtls with tls_client_auth: a token bound to the key store’s certificate', async () => {
    const { manager, http } = managerOf(
      {
        client_id: 'api-a-client',
        tokenBinding: 'mtls',
        token_endpoint_auth_method: 'tls_client_auth',
      },
      path.join(CLIENT_CERTS, 'api-a.pem'),
    );
    try {
      const token = await manager.forService(undefined).get();
      expect(claimsOf(token).cnf).toEqual({
        'x5t#S256': x5t(path.join(CLIENT_CERTS, 'api-a.crt')),
      });
    } finally {
      await http.destroy();
    }
  });

  it('tokenBinding dpop: a DPoP token bound to the service’s key', async () => {
    const { manager, http } = managerOf({ client_id: 'dpop-client', tokenBinding: 'dpop' });
    try {
      const token = await manager.forService(undefined).get();
      expect(claimsOf(token)).toMatchObject({
        client_id: 'dpop-client',
        cnf: { jkt: await manager.dpopKey!.thumbprint() },
      });
    } finally {
      await http.destroy();
    }
  });

  it('a client registered for DPoP without the binding configured gets no token (invalid_grant), and the log holds no secret', async () => {
    const { manager, http } = managerOf({ client_id: 'dpop-client' });
    try {
      await expect(manager.forService(undefined).get()).rejects.toMatchObject({
        code: 'ERR10009',
        cause: { code: 'invalid_grant', oauthError: 'invalid_grant' },
      });
    } finally {
      await http.destroy();
    }
    expect(ts.lines.join('\n')).not.toContain('dpop-secret');
  });
});

describe('sender-constrained tokens: the configuration', () => {
  it.each([
    [
      'tls_client_auth without mtls',
      `clients:\n  c:\n    tokenEndpointAuthMethod: tls_client_auth\n    tlsClientAuthSubjectDn: CN=c\n`,
      '',
      'key "clients.c.tokenEndpointAuthMethod": needs mtls.enabled: true in token-server.yml',
    ],
    [
      'certificate-bound tokens without mtls',
      `clients:\n  c:\n    secret: s\n    certificateBoundAccessTokens: true\n`,
      '',
      'key "clients.c.certificateBoundAccessTokens": needs mtls.enabled: true',
    ],
    [
      'DPoP-bound tokens without dpop',
      `clients:\n  c:\n    secret: s\n    dpopBoundAccessTokens: true\n`,
      '',
      'key "clients.c.dpopBoundAccessTokens": needs dpop.enabled: true in token-server.yml',
    ],
    [
      'tls_client_auth without a subject',
      `clients:\n  c:\n    tokenEndpointAuthMethod: tls_client_auth\n`,
      ENABLED,
      'key "clients.c.tlsClientAuthSubjectDn": is required (tokenEndpointAuthMethod tls_client_auth)',
    ],
    [
      'a subject that is not a DN',
      `clients:\n  c:\n    tokenEndpointAuthMethod: tls_client_auth\n    tlsClientAuthSubjectDn: api-a\n`,
      ENABLED,
      'key "clients.c.tlsClientAuthSubjectDn": is not a distinguished name in RFC 4514 form',
    ],
    [
      'a secret client without a secret',
      `clients:\n  c:\n    scope: [a]\n`,
      '',
      'key "clients.c.secret": is required (tokenEndpointAuthMethod client_secret_basic)',
    ],
    [
      'both bindings',
      `clients:\n  c:\n    secret: s\n    certificateBoundAccessTokens: true\n    dpopBoundAccessTokens: true\n`,
      ENABLED,
      'key "clients.c.dpopBoundAccessTokens": cannot be true with certificateBoundAccessTokens',
    ],
    [
      'mtls without its CA',
      `clients:\n  c:\n    secret: s\n`,
      'mtls:\n  enabled: true\n',
      'key "mtls.caFile": is required when mtls.enabled is true',
    ],
  ])(
    '%s: the server does not start, naming the file and key',
    async (_what, clients, extra, message) => {
      const dir = configDir({ 'token-server.yml': tokenServerYml(extra), 'clients.yml': clients });
      const { code, stderr } = await startExpectingFailure('token-server', dir);
      expect(code).toBe(1);
      expect(stderr).toContain(message);
      expect(stderr).not.toMatch(/\n\s+at /);
    },
  );
});
