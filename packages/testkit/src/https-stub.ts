import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CERTS } from './paths';

export interface Stub {
  url: string;
  port: number;
  /** Request headers of every request so far. */
  requests: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** A real HTTPS server (the dev server certificate) answering with the given handler. */
export async function httpsStub(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: https.ServerOptions & { host?: string } = {},
): Promise<Stub> {
  const { host = '127.0.0.1', ...tls } = options;
  const requests: Stub['requests'] = [];
  const server = https.createServer(
    {
      key: fs.readFileSync(path.join(CERTS, 'server.key')),
      cert: fs.readFileSync(path.join(CERTS, 'server.crt')),
      ...tls,
    },
    (req, res) => {
      requests.push(req.headers);
      handler(req, res);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${host === '127.0.0.1' ? 'localhost' : host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
