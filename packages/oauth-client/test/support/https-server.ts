import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const CERTS = path.resolve(__dirname, '..', '..', '..', '..', 'certs');

export interface SeenRequest {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  url: string;
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** A real HTTPS server with the dev server certificate; the handler sees the whole body. */
export async function httpsServer(
  handler: (req: SeenRequest, res: http.ServerResponse) => void,
  options: https.ServerOptions = {},
  host = '127.0.0.1',
): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = https.createServer(
    {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      ...options,
    },
    (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const r = { method: req.method, url: req.url, headers: req.headers, body };
        seen.push(r);
        handler(r, res);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${host === '127.0.0.1' ? 'localhost' : host}:${port}`,
    port,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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

/** A free port nobody listens on. */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

export const trustingAgent = () =>
  new https.Agent({ ca: fs.readFileSync(path.join(CERTS, 'ca.crt')) });

/** An unsigned JWT-shaped string with the given payload (the client never verifies tokens). */
export function fakeJwt(payload: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'RS256', kid: '100' })}.${enc(payload)}.c2ln`;
}
