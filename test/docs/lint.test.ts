import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '@chain/testkit';

// The lint is type-aware: a promise nobody awaits or catches, or one handed where nothing waits
// for it, fails `pnpm lint` (in a server an unhandled rejection ends the process).

vi.setConfig({ testTimeout: 120_000 });

const PROBE = path.join(ROOT, 'test', 'docs', 'lint-probe');
const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
let probes = 0;

/**
 * The findings of `code` in a file of its own, by ESLint's command line as `pnpm lint` runs it
 * (a process of its own: no program of an earlier probe, no state of the test's process).
 */
async function findings(code: string): Promise<string[]> {
  fs.mkdirSync(PROBE, { recursive: true });
  const file = path.join(PROBE, `probe-${++probes}.ts`);
  fs.writeFileSync(file, code);
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [ESLINT, '--format', 'json', file],
      { cwd: ROOT },
    ).catch((err: { stdout?: string; code?: number }) => {
      // Exit 1: findings (in stdout); anything else is a failure of the probe itself.
      if (err.code === 1 && err.stdout) return { stdout: err.stdout };
      throw err;
    });
    const [result] = JSON.parse(stdout) as {
      messages: { line: number; ruleId: string | null; message: string }[];
    }[];
    return result.messages.map((m) => `${m.line}: ${m.ruleId ?? m.message}`);
  } finally {
    fs.rmSync(PROBE, { recursive: true, force: true });
  }
}

const ASYNC = 'export async function send(): Promise<number> {\n  return 1;\n}\n';

describe('pnpm lint: promises', () => {
  it('a floating promise is an error; awaited, returned, caught or voided it is not', async () => {
    expect(
      await findings(
        `${ASYNC}export function forget(): void {\n  send();\n}\n` +
          'export async function kept(): Promise<void> {\n  await send();\n  void send();\n' +
          '  send().catch(() => undefined);\n}\n',
      ),
    ).toEqual(['5: @typescript-eslint/no-floating-promises']);
  });

  it('a promise where a callback returns nothing (a listener, forEach) is an error', async () => {
    expect(
      await findings(
        `${ASYNC}export function each(items: number[]): void {\n` +
          '  items.forEach(async () => {\n    await send();\n  });\n}\n',
      ),
    ).toEqual(['5: @typescript-eslint/no-misused-promises']);
  });
});
