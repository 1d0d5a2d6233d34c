import { execFile, execFileSync } from 'node:child_process';
import { ROOT } from './paths.js';
import { GiveUp, waitFor } from './wait-for.js';

// The Docker client and Compose as a test drives them, on the engine that DOCKER_HOST names
// (scripts/docker-engine.sh start; eval "$(scripts/docker-engine.sh env)").

/**
 * Runs `docker ...` from the repository root; resolves with stdout, rejects with the end of
 * stdout and stderr (a build says what failed on stdout).
 */
export function docker(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  return run('docker', args, options);
}

function run(
  command: string,
  args: string[],
  { timeoutMs = 120_000 }: { timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const how = err.killed ? `killed after ${timeoutMs} ms` : `exit ${String(err.code)}`;
          const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
          reject(new Error(`${command} ${args.join(' ')}: ${how}\n${tail}`));
        } else resolve(stdout);
      },
    );
  });
}

/**
 * The Compose command a user of this machine has: the `docker compose` plugin (v2) when it
 * answers, else Debian's `docker-compose` (v1). Both take the same arguments.
 */
export function composeCommand(): string[] {
  if (!found) {
    try {
      execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
      found = ['docker', 'compose'];
    } catch {
      found = ['docker-compose'];
    }
  }
  return found;
}
let found: string[] | undefined;

/** `<compose> -p <project> -f <file>... <args>` from the repository root. */
export function compose(
  project: string,
  files: string[],
  args: string[],
  options: { timeoutMs?: number } = {},
): Promise<string> {
  const [command, ...pre] = composeCommand();
  return run(
    command,
    [...pre, '-p', project, ...files.flatMap((f) => ['-f', f]), ...args],
    options,
  );
}

export interface ContainerState {
  id: string;
  name: string;
  image: string;
  user: string;
  hostname: string;
  status: string;
  health: string | undefined;
  startedAt: string;
  restartCount: number;
  service: string | undefined;
}

/** `docker inspect` of containers, in the fields the tests read. */
export async function inspect(ids: string[]): Promise<ContainerState[]> {
  if (ids.length === 0) return [];
  const raw = JSON.parse(await docker(['inspect', ...ids])) as {
    Id: string;
    Name: string;
    RestartCount: number;
    Config: {
      Image: string;
      User: string;
      Hostname: string;
      Labels: Record<string, string> | null;
    };
    State: { Status: string; StartedAt: string; Health?: { Status: string } };
  }[];
  return raw.map((c) => ({
    id: c.Id,
    name: c.Name.replace(/^\//, ''),
    image: c.Config.Image,
    user: c.Config.User,
    hostname: c.Config.Hostname,
    status: c.State.Status,
    health: c.State.Health?.Status,
    startedAt: c.State.StartedAt,
    restartCount: c.RestartCount,
    service: c.Config.Labels?.['com.docker.compose.service'],
  }));
}

/** Every container (running or not) of a compose project, by its compose label. */
export async function projectContainers(project: string): Promise<ContainerState[]> {
  const ids = (
    await docker(['ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`])
  )
    .split('\n')
    .filter(Boolean);
  return inspect(ids);
}

/**
 * Waits until every container has the health status `healthy` from its image's HEALTHCHECK
 * (and, when `after` is given, was started after that instant: a restarted container).
 */
export function waitHealthy(
  ids: string[],
  { timeoutMs = 90_000, after }: { timeoutMs?: number; after?: Date } = {},
): Promise<ContainerState[]> {
  return waitFor(
    `healthy: ${ids.map((i) => i.slice(0, 12)).join(', ')}`,
    async () => {
      const states = await inspect(ids);
      for (const s of states) {
        if (s.status === 'exited' || s.health === 'unhealthy') {
          throw new GiveUp(`${s.name} is ${s.health ?? s.status}`);
        }
      }
      const ready = states.every(
        (s) => s.health === 'healthy' && (!after || new Date(s.startedAt) > after),
      );
      return ready ? states : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}
