import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnNode, ROOT } from '@chain/testkit';

// The service's logger (the built runtime: pino over LogStream, and the audit line's writer) in a
// process whose output goes through a pipe into a file, as `pnpm start` runs a service: the lines
// logged right before the process ends are in the file, however it ends.
const runtime = path.join(ROOT, 'packages', 'runtime', 'dist', 'index.js');

async function runLogging(ending: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-flush-'));
  const script = path.join(dir, 'child.js');
  fs.writeFileSync(
    script,
    [
      `const { createLogger, infoLineWriter } = require(${JSON.stringify(runtime)});`,
      `const logger = createLogger('svc');`,
      `const audit = infoLineWriter(logger, 'jwt verified');`,
      `for (let i = 0; i < 2000; i++) audit({ client_id: 'c', scope: 'api_a.r', correlationId: 'id-' + i });`,
      `logger.warn({ last: true }, 'the last line');`,
      ending,
    ].join('\n'),
  );
  const logFile = path.join(dir, 'svc.log');
  const child = spawnNode('svc', script, { logFile });
  child.detach();
  const code = await child.exited;
  await child.logClosed;
  const lines = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; correlationId?: string; service: string });
  return { code, lines };
}

describe('the service log through a pipe, as pnpm start writes it', () => {
  const expectAll = (lines: { msg: string; correlationId?: string; service: string }[]) => {
    const audit = lines.filter((l) => l.msg === 'jwt verified');
    expect(audit.map((l) => l.correlationId)).toEqual(
      Array.from({ length: 2000 }, (_, i) => `id-${i}`),
    );
    expect(audit[0]).toMatchObject({ service: 'svc', client_id: 'c', scope: 'api_a.r' });
    expect(lines.filter((l) => l.msg === 'the last line')).toHaveLength(1);
  };

  it('a fatal error right after the last lines: every line is in the file', async () => {
    const { code, lines } = await runLogging(`throw new Error('fatal');`);
    expect(code).toBe(1);
    expectAll(lines);
  });

  it('process.exit right after the last lines (the end of a graceful stop): every line', async () => {
    const { code, lines } = await runLogging('process.exit(0);');
    expect(code).toBe(0);
    expectAll(lines);
  });

  it('SIGTERM with the default handler right after the last lines: the lines written so far are whole', async () => {
    const { code, lines } = await runLogging(
      `setTimeout(() => process.kill(process.pid, 'SIGTERM'), 50);`,
    );
    // Killed by the signal (no exit code); what was flushed in 50 ms is every line.
    expect(code).toBeNull();
    expectAll(lines);
  });
});
