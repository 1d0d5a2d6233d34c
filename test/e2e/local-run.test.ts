import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { clientCredentialsToken, httpsRequest, spawnNode, ROOT } from '@chain/testkit';

// `pnpm start` (scripts/start.mjs, with --no-build: the test command has built) on the local
// run's fixed ports: how it ends when a service cannot start, or stops by itself.
vi.setConfig({ testTimeout: 90000, hookTimeout: 90000 });

const runStart = () =>
  spawnNode('pnpm start', path.join(ROOT, 'scripts', 'start.mjs'), {
    args: ['--no-build'],
    cwd: ROOT,
  });

describe('pnpm start', () => {
  it('stops cleanly, without "Try it", when a service cannot listen (EADDRINUSE)', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(7444, '127.0.0.1', resolve));
    try {
      const run = runStart();
      expect(await run.exited).toBe(1);
      expect(run.stdout()).toContain('✓ token-server');
      expect(run.stdout()).not.toContain('Try it');
      expect(run.stdout()).toContain('all services stopped');
      expect(run.stderr()).toMatch(
        /cannot start: api-d exited with code 1 before listening\nCannot start: listen EADDRINUSE/,
      );
    } finally {
      squatter.close();
    }
  });

  it('reports a service that exits with code 0 as a stop, appending to the logs of earlier runs', async () => {
    const log = path.join(ROOT, '.run', 'logs', 'api-d.log');
    fs.mkdirSync(path.dirname(log), { recursive: true });
    const marker = `{"msg":"earlier run ${Date.now()}"}\n`;
    fs.appendFileSync(log, marker);
    const run = runStart();
    await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 30000);
    const started = fs
      .readFileSync(log, 'utf8')
      .split(marker)[1]
      .split('\n')
      .find((l) => l.includes('"msg":"api-d started"'));
    const pid = (JSON.parse(started ?? '{}') as { pid?: number }).pid;
    expect(pid).toEqual(expect.any(Number));
    process.kill(pid!, 'SIGTERM'); // api-d stops by itself (exit 0)
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain('api-d stopped (exit 0)');
    expect(run.stderr()).toBe('');
    const text = fs.readFileSync(log, 'utf8');
    expect(text).toContain(marker);
    expect(text.slice(text.indexOf(marker))).toMatch(
      /"service":"pnpm-start","msg":"starting api-d"/,
    );
  });
});

describe("docs/security.md's worked example of the three grants, pasted after pnpm start", () => {
  it('client credentials, authorization code and refresh token each open the chain; the audit line names alice', async () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
    const block = /<!-- grants:begin[^>]*-->\n```sh\n([\s\S]*?)```\n<!-- grants:end -->/.exec(doc);
    expect(block).not.toBeNull();
    const run = runStart();
    try {
      await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 30000);
      // The block as a user pastes it, in bash from the repository root.
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'bash',
          ['-euo', 'pipefail', '-c', block![1]],
          { cwd: ROOT, timeout: 30000 },
          (err, stdout, stderr) =>
            err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
      const lines = out.trim().split('\n');
      const eight = JSON.stringify(
        ['D', 'C', 'B', 'A'].flatMap((x) => [`API ${x}: Message 1`, `API ${x}: Message 2`]),
      );
      expect(lines).toHaveLength(4);
      expect(lines[0]).toBe(eight);
      expect(lines[1]).toBe(eight);
      expect(JSON.parse(lines[2])).toMatchObject({
        msg: 'jwt verified',
        client_id: 'chain-user',
        user_id: 'alice',
        scope: 'api_a.r',
      });
      expect(lines[3]).toBe(eight);
    } finally {
      await run.stop();
    }
  });
});

describe('pnpm start: no log line lost on SIGTERM', () => {
  it("the audit lines of the last requests before the SIGTERM are in every hop's log file", async () => {
    const logs = path.join(ROOT, '.run', 'logs');
    const run = runStart();
    let stopped = false;
    try {
      await run.waitForLine((l) => l.includes('Ctrl-C stops everything.'), 30000);
      const token = await clientCredentialsToken(
        'https://localhost:6882',
        'chain-user',
        'chain-user-secret',
        'api_a.r',
      );
      // 200 requests through the four hops, 32 at a time, each with its own correlation id.
      const ids = Array.from({ length: 200 }, (_, i) => `sigterm-${Date.now()}-${i}`);
      for (let i = 0; i < ids.length; i += 32) {
        const answers = await Promise.all(
          ids.slice(i, i + 32).map((id) =>
            httpsRequest('https://localhost:7441/v1/data', {
              headers: { Authorization: `Bearer ${token}`, 'X-Correlation-Id': id },
            }),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      }
      // The SIGTERM comes right after the last answer: its audit lines may still be on their way.
      run.child.kill('SIGTERM');
      stopped = true;
      expect(await run.exited).toBe(0);
      for (const name of ['api-a', 'api-b', 'api-c', 'api-d']) {
        const audited = new Set(
          fs
            .readFileSync(path.join(logs, `${name}.log`), 'utf8')
            .split('\n')
            .filter((l) => l.includes('"msg":"jwt verified"') && l.includes('sigterm-'))
            .map((l) => (JSON.parse(l) as { correlationId: string }).correlationId),
        );
        expect({ name, missing: ids.filter((id) => !audited.has(id)) }).toEqual({
          name,
          missing: [],
        });
      }
    } finally {
      if (!stopped) await run.stop();
    }
  });
});
