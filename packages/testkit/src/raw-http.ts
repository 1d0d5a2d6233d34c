import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { CERTS } from './paths.js';

export interface RawAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent on the connection. */
  raw: string;
}

/**
 * Sends bytes no HTTP client library would send (a malformed request line, a 200 KB header,
 * half a request) on a fresh connection, TLS trusting the dev CA when `secure`, and resolves
 * with the first answer once it is complete or the server closed the connection. Write errors
 * are ignored: a server that refuses a request may close while the client still sends.
 */
export function rawRequest(
  port: number,
  request: string | Buffer,
  { secure = true, host = '127.0.0.1' }: { secure?: boolean; host?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let received = '';
    let settled = false;
    const socket = secure
      ? tls.connect({
          port,
          host,
          servername: 'localhost',
          ca: fs.readFileSync(path.join(CERTS, 'ca.crt')),
        })
      : net.connect({ port, host });
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const answer = parseAnswer(received);
      if (answer) resolve(answer);
      else reject(new Error(`no HTTP answer; received ${JSON.stringify(received.slice(0, 200))}`));
    };
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      socket.write(request, () => undefined);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const answer = parseAnswer(received);
      if (answer && answer.body.length >= Number(answer.headers['content-length'] ?? 0)) finish();
    });
    socket.on('error', () => undefined);
    socket.on('close', finish);
  });
}

function parseAnswer(raw: string): RawAnswer | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: raw.slice(end + 4), raw };
}
