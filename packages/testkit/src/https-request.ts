// The one HTTPS request helper of the tests and the scripts: a single request on a fresh
// connection, trusting the development CA (certs/ca.crt, or $CERTS_DIR/ca.crt).
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { CERTS } from './paths';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /**
   * The name the certificate must hold when the URL names the server by its address (a
   * container's, on a test's own network).
   */
  servername?: string;
}

let devCa: Buffer | undefined;

export function httpsRequest(
  url: string,
  { method = 'GET', headers = {}, body, timeoutMs = 10000, servername }: RequestOptions = {},
): Promise<Answer> {
  devCa ??= fs.readFileSync(path.join(CERTS, 'ca.crt'));
  const ca = devCa;
  const tls = servername ? { servername } : {};
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca, agent: false, ...tls }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}
