import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as YAML from 'yaml';
import { ROOT } from './paths.js';

// The compose files, read as plain data for the compose tests.

/** The `yaml` package, for tests that read or write YAML themselves. */
export { YAML };
const { parse } = YAML;

export const COMPOSE_FILES = {
  app: path.join(ROOT, 'compose', 'docker-compose-app.yml'),
  infra: path.join(ROOT, 'compose', 'docker-compose-infra.yml'),
};

export interface ComposeService {
  name: string;
  /** Absolute build context, when the service is built. */
  context?: string;
  /** Dockerfile path relative to the context. */
  dockerfile?: string;
  image?: string;
  ports: { published: number; target: number }[];
  networks: string[];
  /** Bind mounts (absolute host path) and named volumes. */
  volumes: { source: string; target: string }[];
  /** The environment as written (interpolation not applied). */
  environment: Record<string, string>;
}

export interface ComposeFile {
  version?: string;
  services: ComposeService[];
  networks: Record<string, { external?: boolean; name?: string } | null>;
}

interface RawService {
  build?: string | { context?: string; dockerfile?: string };
  image?: string;
  ports?: (string | { published: number | string; target: number | string })[];
  networks?: string[] | Record<string, unknown>;
  volumes?: (string | { source: string; target: string })[];
  environment?: Record<string, string | number | boolean | null> | string[];
}

/**
 * Reads a compose file (the short syntax we write, or the long one `docker-compose config`
 * prints) into one shape; relative host paths resolve against `baseDir`.
 */
export function parseCompose(text: string, baseDir: string): ComposeFile {
  const doc = parse(text) as {
    version?: string;
    services: Record<string, RawService>;
    networks?: ComposeFile['networks'];
  };
  const hostPath = (p: string) => (/^[./]/.test(p) ? path.resolve(baseDir, p) : p);
  const services = Object.entries(doc.services).map(([name, s]): ComposeService => {
    const build = typeof s.build === 'string' ? { context: s.build } : s.build;
    return {
      name,
      context: build?.context === undefined ? undefined : path.resolve(baseDir, build.context),
      dockerfile: build ? (build.dockerfile ?? 'Dockerfile') : undefined,
      image: s.image,
      ports: (s.ports ?? []).map((p) => {
        if (typeof p === 'string') {
          const [published, target] = p.split(':').map(Number);
          return { published, target };
        }
        return { published: Number(p.published), target: Number(p.target) };
      }),
      networks: Array.isArray(s.networks) ? s.networks : Object.keys(s.networks ?? {}),
      volumes: (s.volumes ?? []).map((v) => {
        if (typeof v !== 'string') return { source: hostPath(v.source), target: v.target };
        const [source, target] = v.split(':');
        return { source: hostPath(source), target };
      }),
      environment: Array.isArray(s.environment)
        ? Object.fromEntries(
            s.environment.map((e) => [e.split('=')[0], e.slice(e.indexOf('=') + 1)]),
          )
        : Object.fromEntries(
            Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]),
          ),
    };
  });
  return { version: doc.version, services, networks: doc.networks ?? {} };
}

/** The compose file as written. */
export function readCompose(file: string): ComposeFile {
  return parseCompose(fs.readFileSync(file, 'utf8'), path.dirname(file));
}

/** The compose file as docker-compose (v1, Debian's package) validates and normalizes it. */
export function dockerComposeConfig(file: string): ComposeFile {
  const text = execFileSync('docker-compose', ['-f', file, 'config'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, COMPOSE_INTERACTIVE_NO_CLI: '1' },
  });
  return parseCompose(text, path.dirname(file));
}

/** The folder a service mounts at /config. */
export function configFolder(service: ComposeService): string | undefined {
  return service.volumes.find((v) => v.target === '/config')?.source;
}

/** Writes the compose certificates and secret.yml files (scripts/compose-certs.sh). */
export function composeCerts(): void {
  execFileSync('bash', [path.join(ROOT, 'scripts', 'compose-certs.sh')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
