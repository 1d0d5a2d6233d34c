import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { CERTS, configDir, startService, type ServiceProcess } from './service-process';

export interface TokenServerProcess extends ServiceProcess {
  tokenUrl: string;
  keyUrl: string;
  keyPort: number;
}

export interface Answer {
  status: number;
  headers: import('node:http').IncomingHttpHeaders;
  text: string;
  json: () => unknown;
}

const ca = () => fs.readFileSync(path.join(CERTS, 'ca.crt'));

/** One HTTPS request trusting the dev CA; resolves with status, headers and body text. */
export function request(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, ca: ca(), agent: false },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as unknown,
          }),
        );
      },
    );
    req.setTimeout(options.timeoutMs ?? 10000, () =>
      req.destroy(new Error(`no answer from ${url}`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * token-server.yml for a test: both ports 0 (any free port), loopback only, certificates from
 * the generated dev set; `extra` YAML lines are appended (e.g. `tokenLifetimeSeconds: 5`).
 */
export function tokenServerYml(extra = ''): string {
  return `ip: 127.0.0.1
tokenPort: 0
keyPort: 0
keyFile: ${CERTS}/server.key
certFile: ${CERTS}/server.crt
signing:
  kid: '100'
  keyFile: ${CERTS}/primary.key
certificates:
  '100': ${CERTS}/primary.crt
  '101': ${CERTS}/secondary.crt
shutdownTimeoutMs: 1000
${extra}`;
}

/**
 * Starts the built token server (services/token-server/dist) as a process. Pass `dir` to reuse
 * an override folder (a restart keeps its config; ports 0 pick new ports unless the YAML fixes
 * them).
 */
export async function startTokenServer(
  options: { yml?: string; files?: Record<string, string>; dir?: string } = {},
): Promise<TokenServerProcess> {
  const dir =
    options.dir ??
    configDir({ 'token-server.yml': options.yml ?? tokenServerYml(), ...options.files });
  const proc = await startService('token-server', { configDir: dir });
  const keyLine = await waitForLine(proc, (l) => /"endpoint":"key"/.test(l));
  const keyPort = (JSON.parse(keyLine) as { port: number }).port;
  return {
    ...proc,
    keyPort,
    tokenUrl: `https://localhost:${proc.port}`,
    keyUrl: `https://localhost:${keyPort}`,
  };
}

/** Waits (polling the captured stdout, 5 s at most) for a line that matches. */
export async function waitForLine(
  proc: ServiceProcess,
  match: (line: string) => boolean,
  timeoutMs = 5000,
): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = proc.lines.find(match);
    if (line) return line;
    if (Date.now() > until)
      throw new Error(`no such line from ${proc.name}:\n${proc.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A client-credentials token from the token server (light-oauth2 protocol). */
export async function clientCredentialsToken(
  tokenUrl: string,
  clientId: string,
  secret: string,
  scope?: string,
): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) form.set('scope', scope);
  const answer = await request(`${tokenUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
    },
    body: form.toString(),
  });
  if (answer.status !== 200) throw new Error(`token request: ${answer.status} ${answer.text}`);
  return (answer.json() as { access_token: string }).access_token;
}

/** The token server's own count of token requests per client. */
export async function tokenRequestCounts(tokenUrl: string): Promise<Record<string, number>> {
  const answer = await request(`${tokenUrl}/stats`);
  return (answer.json() as { tokenRequests: Record<string, number> }).tokenRequests;
}

/** The claims of a JWT (not verified). */
export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}
