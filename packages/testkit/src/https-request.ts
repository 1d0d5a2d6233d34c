// The one HTTPS request helper of the tests and the scripts: a single request on a fresh
// connection, trusting the development CA (certs/ca.crt, or $CERTS_DIR/ca.crt).
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { CERTS } from './paths.js';

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
  /** A client certificate and its key (PEM) to present: two-way TLS. */
  client?: { key: Buffer | string; cert: Buffer | string };
  /** The agent whose connections to use; none by default (a fresh connection). */
  agent?: https.Agent | false;
}

/** What one request came to: its status and body text, or the client's error code. */
export interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

let devCa: Buffer | undefined;

export function httpsRequest(url: string, options: RequestOptions = {}): Promise<Answer> {
  const { method = 'GET', headers = {}, body, timeoutMs = 10000, servername } = options;
  const { client, agent = false } = options;
  devCa ??= fs.readFileSync(path.join(CERTS, 'ca.crt'));
  const ca = devCa;
  const tls = { ...(servername && { servername }), ...client };
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca, agent, ...tls }, (res) => {
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
    req.setTimeout(timeoutMs, () => {
      const err = new Error(`no answer from ${url} within ${timeoutMs} ms`);
      req.destroy(Object.assign(err, { code: 'TIMEOUT' }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One request (httpsRequest) that a TLS or connection failure may end: its status and body text,
 * or the client's error code (`ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED`, `ECONNRESET`,
 * `TIMEOUT` ...) and no answer.
 */
export async function httpsOutcome(url: string, options: RequestOptions = {}): Promise<Outcome> {
  try {
    const { status, text } = await httpsRequest(url, options);
    return { status, body: text };
  } catch (err) {
    return { error: (err as { code?: string }).code };
  }
}

/**
 * A form POST (a token request) on a fresh connection, presenting `client`'s certificate if
 * given: the whole answer, its JSON body typed as `T`.
 */
export async function postForm<T = Record<string, unknown>>(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
  client?: RequestOptions['client'],
): Promise<Answer & { body: T }> {
  const answer = await httpsRequest(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    client,
  });
  return answer as Answer & { body: T };
}
