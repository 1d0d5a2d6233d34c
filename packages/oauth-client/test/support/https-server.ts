import type http from 'node:http';
import type https from 'node:https';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { CERTS, configDir, serveHttps, type HttpsServer } from '@chain/testkit';
import { HttpClient } from '@chain/http';
import { clientConfigSchema, type ClientConfig } from '../../src/index.js';

export interface SeenRequest {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer extends HttpsServer {
  seen: SeenRequest[];
}

/** A real HTTPS server (testkit's serveHttps); the handler sees the whole body. */
export async function httpsServer(
  handler: (req: SeenRequest, res: http.ServerResponse) => void,
  options: https.ServerOptions = {},
  host = '127.0.0.1',
): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = await serveHttps(
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const r = { method: req.method, url: req.url, headers: req.headers, body };
        seen.push(r);
        handler(r, res);
      });
    },
    options,
    host,
  );
  return { ...server, seen };
}

export function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  type = 'application/json',
) {
  res.writeHead(status, { 'Content-Type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** client.yml `tls` trusting the dev CA (certs/ca.crt), hostname verified, no key store. */
export const TRUSTING: Partial<ClientConfig['tls']> = {
  verifyHostname: true,
  loadDefaultTrustStore: false,
  loadTrustStore: true,
  trustStore: path.join(CERTS, 'ca.crt'),
  loadKeyStore: false,
};

/** client.yml `tls` as its loader reads it (the trust and key stores read): `TRUSTING` changed. */
export function loadedTls(tls: Partial<ClientConfig['tls']> = {}): ClientConfig['tls'] {
  const dir = configDir({ 'client.yml': JSON.stringify({ tls: { ...TRUSTING, ...tls } }) });
  const loader = new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env: {} });
  return loader.load('client', clientConfigSchema).tls;
}

/** The clients made by `testClient`, closed by `closeClients`. */
const made: HttpClient[] = [];

/**
 * The service's HTTP client as client.yml makes it: `TRUSTING` changed by `tls`, a connect
 * time-out of 1000 ms unless given, HTTP/1.1 only unless `enableHttp2`.
 */
export function testClient(
  options: {
    tls?: Partial<ClientConfig['tls']>;
    connectTimeout?: number;
    enableHttp2?: boolean;
  } = {},
): HttpClient {
  const client = new HttpClient({
    tls: loadedTls(options.tls),
    request: {
      connectTimeout: options.connectTimeout ?? 1000,
      enableHttp2: options.enableHttp2 ?? false,
    },
  });
  made.push(client);
  return client;
}

/** Closes every connection of the clients made so far (an `afterEach` / `afterAll`). */
export async function closeClients(): Promise<void> {
  await Promise.all(made.splice(0).map((c) => c.destroy()));
}

/** An unsigned JWT-shaped string with the given payload (the client never verifies tokens). */
export function fakeJwt(payload: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'RS256', kid: '100' })}.${enc(payload)}.c2ln`;
}
