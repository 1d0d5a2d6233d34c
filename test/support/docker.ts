import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './service-process';

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

/** Thrown by a probe of waitFor to stop waiting at once (the state can no longer come). */
export class GiveUp extends Error {}

/**
 * Calls `probe` until it returns a value other than undefined, at most `timeoutMs`; rejects with
 * `what` and the last error or value otherwise. For states that only an outside signal ends
 * (a health status, a line in a log, a report in a database), never as a fixed delay.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 60_000, intervalMs = 250 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      last = undefined;
    } catch (err) {
      if (err instanceof GiveUp) throw new Error(`${what}: ${err.message}`);
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`${what}: not within ${timeoutMs} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
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

export interface SavedLayer {
  /** The layer's diff id (sha256 of its tar), as `docker image inspect` lists it in RootFS. */
  diffId: string;
  /** The layer's tar inside the saved folder. */
  tar: string;
  /** Uncompressed size in bytes. */
  size: number;
}

export interface SavedImage {
  names: string[];
  /** The image config as saved (environment, command, history...), raw JSON. */
  configText: string;
  layers: SavedLayer[];
}

/**
 * `docker save` of the images, unpacked into `dir`: each image's config and layers, in order
 * (an image saved under several names is one entry).
 */
export async function saveImages(names: string[], dir: string): Promise<SavedImage[]> {
  const file = path.join(dir, 'images.tar');
  await docker(['save', '-o', file, ...names], { timeoutMs: 10 * 60_000 });
  execFileSync('tar', ['-xf', file, '-C', dir]);
  fs.rmSync(file);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
    Config: string;
    RepoTags: string[] | null;
    Layers: string[];
  }[];
  return manifest.map((m) => {
    const configText = fs.readFileSync(path.join(dir, m.Config), 'utf8');
    const diffIds = (JSON.parse(configText) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
    return {
      names: m.RepoTags ?? [],
      configText,
      layers: m.Layers.map((l, i) => ({
        diffId: diffIds[i],
        tar: path.join(dir, l),
        size: fs.statSync(path.join(dir, l)).size,
      })),
    };
  });
}

/** The diff ids of an image's layers (`docker image inspect`). */
export async function layerIds(image: string): Promise<string[]> {
  const [info] = JSON.parse(await docker(['image', 'inspect', image])) as {
    RootFS: { Layers: string[] };
  }[];
  return info.RootFS.Layers;
}
