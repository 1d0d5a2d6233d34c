import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CERTS } from './paths.js';

export interface Stub extends HttpsServer {
  /** Request headers of every request so far. */
  requests: http.IncomingHttpHeaders[];
}

export interface HttpsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A real HTTPS server with the dev server certificate (certs/server.key, server.crt, which name
 * localhost) on a free port of `host`, answering with `handler`; `close` ends every connection.
 */
export async function serveHttps(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: https.ServerOptions = {},
  host = '127.0.0.1',
): Promise<HttpsServer> {
  const server = https.createServer(
    {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      ...options,
    },
    handler,
  );
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${host === '127.0.0.1' ? 'localhost' : host}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A real HTTPS server (serveHttps) answering with the given handler, keeping request headers. */
export async function httpsStub(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: https.ServerOptions & { host?: string } = {},
): Promise<Stub> {
  const { host, ...tls } = options;
  const requests: Stub['requests'] = [];
  const server = await serveHttps(
    (req, res) => {
      requests.push(req.headers);
      handler(req, res);
    },
    tls,
    host,
  );
  return { ...server, requests };
}

/**
 * A token endpoint (light-oauth2's /oauth2/token, any path): every request gets `token()` as a
 * bearer access token for 600 s.
 */
export function tokenEndpointStub(token: () => string): Promise<Stub> {
  return httpsStub((_req, res) =>
    json(res, 200, { access_token: token(), token_type: 'bearer', expires_in: 600 }),
  );
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
