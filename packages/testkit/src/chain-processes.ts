import fs from 'node:fs';
import path from 'node:path';
import { configDir } from './config-dir.js';
import { httpsRequest, type Answer } from './https-request.js';
import type { TokenServerProcess } from './local-token-server.js';
import { CERTS } from './paths.js';
import { jwtSecurityYml } from './security-yml.js';
import { serverYml } from './server-yml.js';
import { startService, type ServiceProcess } from './service-process.js';

export type Letter = 'a' | 'b' | 'c' | 'd';
export const LETTERS: readonly Letter[] = ['a', 'b', 'c', 'd'];
const NEXT: Record<Letter, Letter | undefined> = { a: 'b', b: 'c', c: 'd', d: undefined };
/** The scopes each service's own token is asked with (what its downstream requires). */
export const OWN_SCOPES: Record<Letter, string[]> = {
  a: ['api_b.r', 'api_b.w'],
  b: ['api_c.r', 'api_c.w'],
  c: ['api_d.r', 'api_d.w'],
  d: [],
};

/** The client certificates of scripts/gen-certs.sh (`<name>.pem`: key and certificate) and their CA. */
export const CLIENT_CERTS = path.join(CERTS, 'clients');
/** The subject DN of a client certificate of scripts/gen-certs.sh. */
export const clientDn = (name: string): string => `CN=${name},O=secured-rest-chain dev`;
/** A client certificate of scripts/gen-certs.sh as TLS options (`key` and `cert`). */
export const clientCertificate = (name: string): { key: Buffer; cert: Buffer } => {
  const pem = fs.readFileSync(path.join(CLIENT_CERTS, `${name}.pem`));
  return { key: pem, cert: pem };
};
/** server.yml of a chain hop that asks every caller for a certificate of the client CA. */
export const twoWayTlsServerYml = (letter: Letter): string =>
  `serviceId: com.networknt.api${letter}-1.0.0\nip: 127.0.0.1\nhttpsPort: 0\nkeyFile: ${CERTS}/server.key\ncertFile: ${CERTS}/server.crt\nshutdownTimeoutMs: 1000\nenableTwoWayTls: true\ntruststoreName: ${CLIENT_CERTS}/ca.crt\n`;

/** D1 D2 C1 C2 B1 B2 A1 A2: what api-a answers. */
export const EIGHT = ['D', 'C', 'B', 'A'].flatMap((l) => [
  `API ${l}: Message 1`,
  `API ${l}: Message 2`,
]);

/**
 * The token server's count of token requests (tokenRequestCounts) after one call of chain-user
 * through the chain: the user's token, and one of its own for each hop that calls the next.
 */
export const ONE_CALL_TOKENS = {
  'chain-user': 1,
  'api-a-client': 1,
  'api-b-client': 1,
  'api-c-client': 1,
};

/** The petstore's answer to GET /v2/pet/1 (its one dog). */
export const PET_1 = {
  id: 1,
  name: 'Rex',
  photoUrls: ['https://example.com/photos/rex-1.jpg'],
  category: { id: 1, name: 'Dogs' },
  tags: [{ id: 1, name: 'friendly' }],
  status: 'available',
};

export interface ChainOptions {
  ts: TokenServerProcess;
  /**
   * security.yml lines after `enableVerifyJwt: true`, `logJwtToken: false` and
   * `logClientUserScope: true`, in place of the default `jwt` map (kids 100 and 101 configured).
   */
  security?: string;
  /** client.yml `request:` lines (indented two spaces). */
  request?: string;
  /** client.yml `oauth.token:` renewal lines (indented four spaces). */
  renewal?: string;
  /** More files per service (prometheus.yml, telemetry.yml, …). */
  files?: (letter: Letter) => Record<string, string>;
  env?: NodeJS.ProcessEnv;
}

export interface RunningChain {
  services: Record<Letter, ServiceProcess>;
  /** Each service's override folder (a restart reuses it). */
  dirs: Record<Letter, string>;
  /** GET /v1/data on a service. */
  call(letter: Letter, headers?: Record<string, string>): Promise<Answer>;
  /** Starts a service again on the port it had (after it was stopped or killed). */
  restart(letter: Letter): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

const chainServerYml = (letter: Letter, httpsPort = 0) =>
  serverYml(`com.networknt.api${letter}-1.0.0`, { httpsPort, shutdownTimeoutMs: 1000 });

/**
 * The four chain services as real processes over HTTPS, security on, api-d first, each calling
 * the next one's real port, all with their own tokens and keys from the given token server.
 * Audit lines hold client_id, user_id and scope (never the token).
 */
export async function startChain(options: ChainOptions): Promise<RunningChain> {
  const { ts } = options;
  const services = {} as Record<Letter, ServiceProcess>;
  const dirs = {} as Record<Letter, string>;
  const clientYml = (letter: Letter) => `tls:
  trustStore: ${CERTS}/ca.crt
request:
${options.request ?? '  timeout: 2000\n'}oauth:
  token:
    server_url: ${ts.tokenUrl}
${options.renewal ?? ''}    client_credentials:
      uri: /oauth2/token
      client_id: api-${letter}-client
      scope: [${OWN_SCOPES[letter].join(', ')}]
  key:
    server_url: ${ts.keyUrl}
    uri: /oauth2/key
    client_id: api-${letter}-client
`;
  for (const letter of [...LETTERS].reverse()) {
    const next = NEXT[letter];
    const files: Record<string, string> = {
      'server.yml': chainServerYml(letter),
      'security.yml': jwtSecurityYml({
        kids: options.security === undefined ? undefined : [],
        keys: { logJwtToken: false, logClientUserScope: true },
        extra: options.security,
      }),
      'client.yml': clientYml(letter),
      ...options.files?.(letter),
    };
    if (next) {
      files[`api_${letter}.yml`] =
        `api_${next}_host: https://localhost:${services[next].port}\napi_${next}_path: /v1/data\n`;
    }
    dirs[letter] = configDir(files);
    services[letter] = await startService(`api-${letter}`, {
      configDir: dirs[letter],
      env: options.env,
    });
  }
  return {
    services,
    dirs,
    call: (letter, headers = {}) =>
      httpsRequest(`https://localhost:${services[letter].port}/v1/data`, { headers }),
    async restart(letter) {
      fs.writeFileSync(
        path.join(dirs[letter], 'server.yml'),
        chainServerYml(letter, services[letter].port),
      );
      services[letter] = await startService(`api-${letter}`, {
        configDir: dirs[letter],
        env: options.env,
      });
      return services[letter];
    },
    async stop() {
      await Promise.all(LETTERS.map((l) => services[l]?.stop()));
    },
  };
}

export interface LogLine {
  msg: string;
  [key: string]: unknown;
}

/** The JSON lines of a process (others skipped). */
export function jsonLines(p: ServiceProcess): LogLine[] {
  return p.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });
}

/** Resolves at a moment a process named (an expiry), not after a guessed sleep. */
export const at = (t: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, t - Date.now())));
