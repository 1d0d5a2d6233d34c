import pino from 'pino';
import request from 'supertest';
import { ConfigError } from '@chain/errors';
import { createApp } from '../src/app.js';
import { serviceConfig } from '../../../test/support/service-config.js';
import {
  hostileTokens,
  mintToken,
  httpsRequest,
  CERTS,
  configDir,
  startExpectingFailure,
  startService,
  PET_1,
} from '@chain/testkit';
import { describeSecurity, primary, securityYml } from '../../../test/support/security-suite.js';

const clientYml = (keyServerUrl: string) => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 500
oauth:
  key:
    server_url: ${keyServerUrl}
    uri: /oauth2/key
    client_id: petstore-client
`;

function linesLogger(lines: string[]) {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
}

describeSecurity('petstore', {
  path: '/v2/pet/1',
  required: ['read:pets'],
  okBody: PET_1,
  keyClient: { id: 'petstore-client', secret: 'petstore-secret' },
  createApp: ({ security, keyServerUrl }, lines) =>
    createApp(
      serviceConfig('petstore', {
        'security.yml': security,
        'client.yml': clientYml(keyServerUrl),
      }),
      linesLogger(lines),
    ).listener,
});

describe('petstore enableMockJwt', () => {
  const files = {
    'security.yml': securityYml('enableMockJwt: true\n'),
    'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\n`,
  };

  it('issues a token at POST /oauth2/token that the petstore accepts', async () => {
    const app = createApp(serviceConfig('petstore', files), linesLogger([])).listener;
    const issued = await request(app)
      .post('/oauth2/token')
      .auth('petstore-client', 'x')
      .type('form')
      .send({ grant_type: 'client_credentials', scope: 'read:pets' })
      .expect(200);
    expect(issued.body).toMatchObject({
      token_type: 'bearer',
      expires_in: 600,
      scope: 'read:pets',
    });
    const res = await request(app)
      .get('/v2/pet/2')
      .set('Authorization', `Bearer ${issued.body.access_token}`);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Tom');
  });

  it('is refused at build with NODE_ENV=production', () => {
    const saved = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(() => createApp(serviceConfig('petstore', files), linesLogger([]))).toThrow(
        ConfigError,
      );
    } finally {
      process.env.NODE_ENV = saved;
    }
  });

  it('stops the built service at start with NODE_ENV=production, saying why', async () => {
    const dir = configDir(files);
    const { code, stderr } = await startExpectingFailure('petstore', dir, {
      NODE_ENV: 'production',
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'Cannot start: Config error in security.yml at key "enableMockJwt": must be false when NODE_ENV=production (the mock token endpoint is for tests only)\n',
    );
  });
});

describe('the built petstore process with security on', () => {
  it('answers a 100 KB token 401 ERR10000 over HTTPS and keeps serving', async () => {
    const service = await startService('petstore', {
      configDir: configDir({
        'server.yml': `serviceId: petstore-test\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\n`,
        'security.yml': securityYml(),
        'client.yml': `tls:\n  trustStore: ${CERTS}/ca.crt\n`,
      }),
    });
    try {
      const url = `https://localhost:${service.port}/v2/pet/1`;
      const big = hostileTokens(primary, { scope: ['read:pets'] }).find(
        (t) => t.name === '100 KB token',
      )!;
      expect(big.token.length).toBeGreaterThan(100 * 1024);
      const refused = await httpsRequest(url, {
        headers: { Authorization: `Bearer ${big.token}` },
      });
      expect({
        status: refused.status,
        body: refused.body,
        challenge: refused.headers['www-authenticate'],
      }).toEqual({
        status: 401,
        body: {
          statusCode: 401,
          code: 'ERR10000',
          message: 'INVALID_AUTH_TOKEN',
          description: 'Incorrect signature or malformed token in authorization header',
        },
        challenge:
          'Bearer realm="api", error="invalid_token", error_description="Incorrect signature or malformed token in authorization header"',
      });
      const served = await httpsRequest(url, {
        headers: { Authorization: `Bearer ${mintToken(primary, { scope: ['read:pets'] })}` },
      });
      expect(served.status).toBe(200);
      expect(service.lines.join('\n')).not.toContain(big.token);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
