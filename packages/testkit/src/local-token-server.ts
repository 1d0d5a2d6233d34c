import { configDir } from './config-dir.js';
import { freePort } from './free-port.js';
import { httpsRequest } from './https-request.js';
import { CERTS } from './paths.js';
import { startService, type ServiceProcess } from './service-process.js';

export interface TokenServerProcess extends ServiceProcess {
  tokenUrl: string;
  keyUrl: string;
  keyPort: number;
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
 * Starts the built token server (services/token-server/dist) as a process, with its bundled
 * clients and users. Pass `dir` to reuse an override folder (a restart keeps its config; ports 0
 * pick new ports unless the YAML fixes them).
 */
export async function startTokenServer(
  options: { yml?: string; files?: Record<string, string>; dir?: string } = {},
): Promise<TokenServerProcess> {
  const dir =
    options.dir ??
    configDir({ 'token-server.yml': options.yml ?? tokenServerYml(), ...options.files });
  const proc = await startService('token-server', { configDir: dir });
  const keyLine = await proc.waitForLine((l) => /"endpoint":"key"/.test(l));
  const keyPort = (JSON.parse(keyLine) as { port: number }).port;
  return {
    ...proc,
    keyPort,
    tokenUrl: `https://localhost:${proc.port}`,
    keyUrl: `https://localhost:${keyPort}`,
  };
}

/**
 * A token server whose issuer is the URL it listens at, `https://localhost:<a free port>`, as
 * a client that discovers it checks (the metadata names the URL it is served from).
 */
export async function startTokenServerAtIssuer(
  options: { extra?: string; files?: Record<string, string> } = {},
): Promise<TokenServerProcess> {
  const port = await freePort();
  const yml = tokenServerYml(`issuer: https://localhost:${port}\n${options.extra ?? ''}`);
  return startTokenServer({
    yml: yml.replace('tokenPort: 0', `tokenPort: ${port}`),
    files: options.files,
  });
}

/**
 * A client-credentials token from a light-oauth2 token endpoint (form POST, Basic auth).
 * `tokenUrl`: the server, e.g. https://localhost:6882; `scope`: space-separated.
 */
export async function clientCredentialsToken(
  tokenUrl: string,
  clientId: string,
  secret: string,
  scope?: string,
): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) form.set('scope', scope);
  const answer = await httpsRequest(`${tokenUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
    },
    body: form.toString(),
  });
  const token = (answer.body as { access_token?: unknown } | undefined)?.access_token;
  if (answer.status !== 200 || typeof token !== 'string') {
    throw new Error(`token request: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return token;
}

/** The token server's own count of token requests per client. */
export async function tokenRequestCounts(tokenUrl: string): Promise<Record<string, number>> {
  const answer = await httpsRequest(`${tokenUrl}/stats`);
  return (answer.body as { tokenRequests: Record<string, number> }).tokenRequests;
}
