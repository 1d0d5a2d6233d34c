import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { ConfigError } from '@chain/errors';
import { CERTS } from '@chain/testkit';
import { createServiceApp } from '../src/index.js';
import { captureLogger, fixtureConfig, FRAMEWORKS } from './support.js';

// security.yml enableVerifySwt wired by the runtime: client.yml's introspection server over the
// service's HTTP client, the headers that may bring the introspection client, and the start-up
// rules. (The real token server and real processes: test/e2e/introspection.test.ts.)

const now = () => Math.floor(Date.now() / 1000);
/** What the introspection server saw: the asking client (Basic) and the token. */
const seen: { client: string; token: string | null }[] = [];
let server: https.Server;
let serverUrl: string;
beforeAll(async () => {
  server = https.createServer(
    {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
    },
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const client = Buffer.from((req.headers.authorization ?? '').slice(6), 'base64').toString();
        const token = new URLSearchParams(body).get('token');
        seen.push({ client, token });
        const known = ['svc:svc-secret', 'consumer:consumer-secret'].includes(client);
        res.writeHead(known ? 200 : 401, { 'Content-Type': 'application/json; charset=utf-8' });
        if (!known)
          res.end('{"error":"invalid_client","error_description":"client authentication failed"}');
        else if (token === 'opaque-reader')
          res.end(
            JSON.stringify({
              active: true,
              token_type: 'Bearer',
              client_id: 'reader',
              scope: 'items.r',
              exp: now() + 600,
            }),
          );
        else res.end('{"active":false}');
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `https://localhost:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  seen.splice(0);
});

const CLIENT = () => `tls:
  trustStore: ${CERTS}/ca.crt
oauth:
  introspection:
    server_url: ${serverUrl}
    client_id: svc
`;
const SECRET = 'introspectionClientSecret: svc-secret\n';

describe.each(FRAMEWORKS)('opaque tokens on the %s host', (framework) => {
  const service = (files: Record<string, string>) => {
    const log = captureLogger();
    const config = fixtureConfig(framework, files);
    const headersSeen: Record<string, unknown>[] = [];
    const app = createServiceApp({
      config,
      logger: log.logger,
      routes: (routes) =>
        routes.get('/v1/items/{id}', ({ req, context }) => {
          headersSeen.push({ ...req.headers });
          return { caller: context.caller?.clientId ?? null };
        }),
    });
    return { app, config, headersSeen };
  };
  const swtOnly = () =>
    service({
      'security.yml': 'enableVerifySwt: true\n',
      'client.yml': CLIENT(),
      'secret.yml': SECRET,
    });

  it('enableVerifySwt alone: the token is introspected at client.yml oauth.introspection, as its client', async () => {
    const { app } = swtOnly();
    const ok = await request(app.listener)
      .get('/v1/items/1')
      .set('Authorization', 'Bearer opaque-reader');
    expect([ok.status, ok.body]).toEqual([200, { caller: 'reader' }]);
    const inactive = await request(app.listener)
      .get('/v1/items/1')
      .set('Authorization', 'Bearer revoked');
    expect([inactive.status, inactive.body.code]).toEqual([401, 'ERR10081']);
    expect(seen).toEqual([
      { client: 'svc:svc-secret', token: 'opaque-reader' },
      { client: 'svc:svc-secret', token: 'revoked' },
    ]);
  });

  it("the request's swt-client / swt-secret headers ask instead, and go no further than the introspection", async () => {
    const { app, headersSeen } = swtOnly();
    const ok = await request(app.listener)
      .get('/v1/items/1')
      .set('Authorization', 'Bearer opaque-reader')
      .set('swt-client', 'consumer')
      .set('swt-secret', 'consumer-secret');
    expect(ok.status).toBe(200);
    expect(headersSeen[0]).not.toHaveProperty('swt-client');
    expect(headersSeen[0]).not.toHaveProperty('swt-secret');
    const refused = await request(app.listener)
      .get('/v1/items/1')
      .set('Authorization', 'Bearer opaque-reader')
      .set('swt-client', 'consumer')
      .set('swt-secret', 'wrong');
    expect([refused.status, refused.body.code]).toEqual([401, 'ERR10080']);
    expect(seen.map((s) => s.client)).toEqual(['consumer:consumer-secret', 'consumer:wrong']);
  });

  it('beside enableVerifyJwt without an introspection server: a start-up warning, JWTs only', async () => {
    const { app, config } = service({
      'security.yml': `enableVerifyJwt: true\nenableVerifySwt: true\njwt:\n  certificate:\n    '100': ${CERTS}/primary.crt\n`,
    });
    expect(config.loader.warnings.map((w) => [path.basename(w.file), w.key, w.message])).toEqual([
      [
        'security.yml',
        'enableVerifySwt',
        'no introspection server (client.yml oauth.introspection): only JWTs are verified, any other token is refused (ERR10000)',
      ],
    ]);
    const res = await request(app.listener)
      .get('/v1/items/1')
      .set('Authorization', 'Bearer opaque-reader');
    expect([res.status, res.body.code]).toEqual([401, 'ERR10000']);
    expect(seen).toEqual([]);
  });

  it('enableVerifySwt alone without an introspection server stops the service naming the key', () => {
    expect(() => service({ 'security.yml': 'enableVerifySwt: true\n' })).toThrow(ConfigError);
    expect(() => service({ 'security.yml': 'enableVerifySwt: true\n' })).toThrow(
      /client\.yml at key "oauth\.key\.server_url": is required to introspect opaque tokens/,
    );
  });
});
