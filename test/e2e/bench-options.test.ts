import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, runToExit } from '@chain/testkit';

// The one command-line reader of the bench scripts (scripts/bench/lib/args.mjs, an ES module:
// run in a Node process of its own), every script exiting 2 on a bad command line, with a
// message naming the option, before it starts anything, and the JSON rows the sub-benchmarks
// hand over to run.mjs (never a table read back from their output).
const ARGS = pathToFileURL(path.join(ROOT, 'scripts', 'bench', 'lib', 'args.mjs')).href;
const BENCH = path.join(ROOT, 'scripts', 'bench');

/** The spec the parser is tried with, as JavaScript (a default may be a function). */
const SPEC = `{
  quick: { kind: 'flag' },
  duration: { kind: 'seconds', default: (v) => (v.quick ? 1 : 4) },
  rounds: { kind: 'count', default: 5 },
  only: { kind: 'list' },
  url: { kind: 'url' },
  letter: { kind: 'text', choices: ['A', 'B'] },
  header: { kind: 'header', multiple: true },
}`;

/** parseOptions(argv, SPEC): its values (and the options given), or the UsageError's message. */
function parse(argv: string[]): unknown {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { parseOptions, UsageError } from ${JSON.stringify(ARGS)};
       try {
         const { values, given } = parseOptions(${JSON.stringify(argv)}, ${SPEC});
         console.log(JSON.stringify({ values, given: [...given] }));
       } catch (err) {
         if (!(err instanceof UsageError)) throw err;
         console.log(JSON.stringify({ error: err.message }));
       }`,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out);
}

describe('the bench option reader', () => {
  it('drops the leading -- that `pnpm bench -- --only a` passes on, and only that one', () => {
    expect(parse(['--', '--rounds', '3'])).toMatchObject({ values: { rounds: 3 } });
    expect(parse(['--', '--', '--rounds', '3'])).toEqual({
      error: expect.stringContaining("Unexpected argument '--rounds'"),
    });
  });

  it('reads each kind and fills the defaults, a default may depend on another option', () => {
    expect(
      parse([
        '--duration',
        '2.5',
        '--rounds=3',
        '--only',
        'a, b,,c',
        '--url',
        'https://localhost:1/v1/data',
        '--letter',
        'B',
        '--header',
        'Authorization: Bearer x:y',
        '--header',
        'X-A:1',
      ]),
    ).toEqual({
      values: {
        duration: 2.5,
        rounds: 3,
        only: ['a', 'b', 'c'],
        url: 'https://localhost:1/v1/data',
        letter: 'B',
        header: [
          ['Authorization', 'Bearer x:y'],
          ['X-A', '1'],
        ],
        quick: false,
      },
      given: ['duration', 'rounds', 'only', 'url', 'letter', 'header'],
    });
    expect(parse(['--quick'])).toEqual({
      values: { quick: true, duration: 1, rounds: 5, header: [] },
      given: ['quick'],
    });
    expect(parse([])).toEqual({
      values: { quick: false, duration: 4, rounds: 5, header: [] },
      given: [],
    });
  });

  it.each([
    [['--duration', 'abc'], '--duration must be a positive number of seconds, got "abc"'],
    [['--duration', '0'], '--duration must be a positive number of seconds, got "0"'],
    [['--duration', '1e3'], '--duration must be a positive number of seconds, got "1e3"'],
    [['--duration='], '--duration must be a positive number of seconds, got ""'],
    [['--rounds', '0'], '--rounds must be a positive integer, got "0"'],
    [['--rounds', '1.5'], '--rounds must be a positive integer, got "1.5"'],
    [['--rounds', '07'], '--rounds must be a positive integer, got "07"'],
    [['--rounds=-2'], '--rounds must be a positive integer, got "-2"'],
    [['--rounds', ' 3'], '--rounds must be a positive integer, got " 3"'],
    [['--only', ' , '], '--only must be a comma-separated list of names, got " , "'],
    [['--url', 'localhost:1'], '--url must be an http or https URL, got "localhost:1"'],
    [['--url', 'ftp://localhost/'], '--url must be an http or https URL, got "ftp://localhost/"'],
    [['--letter', 'C'], '--letter must be one of A, B, got "C"'],
    [['--header', 'no colon'], '--header must be a header line "Name: value", got "no colon"'],
    [['--header', ': x'], '--header must be a header line "Name: value", got ": x"'],
  ])('refuses %j naming the option', (argv, message) => {
    expect(parse(argv)).toEqual({ error: message });
  });

  it.each([
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['--rounds'], "Option '--rounds <value>' argument missing"],
    [['--quick=yes'], "Option '--quick' does not take an argument"],
    [['--quick', 'extra'], "Unexpected argument 'extra'"],
    [['--rounds', '--quick'], "Option '--rounds' argument is ambiguous"],
  ])('refuses %j as node:util parseArgs does, naming the option', (argv, message) => {
    const answer = parse(argv) as { error: string };
    expect(answer.error.startsWith(message)).toBe(true);
  });
});

describe('the bench scripts on a bad command line', () => {
  const run = (script: string, args: string[]) =>
    runToExit(path.join(BENCH, script), { args, cwd: ROOT, timeoutMs: 20_000 });

  it.each([
    [
      'run.mjs',
      ['--duration', 'abc'],
      '--duration must be a positive number of seconds, got "abc"',
    ],
    ['run.mjs', ['--rounds', '0'], '--rounds must be a positive integer, got "0"'],
    ['run.mjs', ['--connections', '1.5'], '--connections must be a positive integer, got "1.5"'],
    ['run.mjs', ['--tokens', '1e6'], '--tokens must be a positive integer, got "1e6"'],
    ['run.mjs', ['--soak', '-1'], "Option '--soak' argument is ambiguous"],
    ['run.mjs', ['--frobnicate'], "Unknown option '--frobnicate'"],
    [
      'run.mjs',
      ['--base-node', '/usr/bin/node'],
      '--base-node needs --base DIR: the checkout that runs on it',
    ],
    ['security-route.mjs', ['--rounds', '0'], '--rounds must be a positive integer, got "0"'],
    [
      'metrics-overhead.mjs',
      ['--connections', '1.5'],
      '--connections must be a positive integer, got "1.5"',
    ],
    [
      'telemetry-overhead.mjs',
      ['--duration', 'abc'],
      '--duration must be a positive number of seconds, got "abc"',
    ],
    ['workers-scaling.mjs', ['--json'], "Option '--json <value>' argument missing"],
    ['resources.mjs', ['--quick'], "Unknown option '--quick'"],
    ['reload-memory.mjs', ['--reloads', '0'], '--reloads must be a positive integer, got "0"'],
    [
      'reload-memory.mjs',
      ['--idle', 'abc'],
      '--idle must be a positive number of seconds, got "abc"',
    ],
    ['profile.mjs', ['--system', 'nope'], '--system must be one of baseline, peer,'],
    [
      'profile.mjs',
      ['--system', 'shipped-base'],
      'shipped-base needs --base DIR: a built checkout to compare with',
    ],
    ['load.mjs', ['--duration', '2'], '--url is required'],
    [
      'load.mjs',
      ['--url', 'https://localhost:1/', '--header', 'x'],
      '--header must be a header line "Name: value", got "x"',
    ],
    [
      'token-flood.mjs',
      ['--url', 'https://localhost:1/', '--workers', '0'],
      '--workers must be a positive integer, got "0"',
    ],
    ['bare-hop.mjs', ['--letter', 'E'], '--letter must be one of A, B, C, D, got "E"'],
    [
      'peer-hop.mjs',
      ['--downstream', 'nowhere'],
      '--downstream must be an http or https URL, got "nowhere"',
    ],
  ])('%s %j exits 2 naming the option, with the usage', async (script, args, message) => {
    const { code, stdout, stderr } = await run(script, args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr.startsWith(message)).toBe(true);
    expect(stderr).toContain(`scripts/bench/${script}`);
  });

  it('a --base-node that does not run: exit 2 naming it, before anything starts', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-node');
    const args = ['--only', 'shipped-base', '--base', ROOT, '--base-node', missing];
    const { code, stdout, stderr } = await run('run.mjs', args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(new RegExp(`^--base-node ${missing} does not run: .*ENOENT`));
  });

  it('prints the usage and exits 0 on --help', async () => {
    const { code, stdout, stderr } = await run('security-route.mjs', ['--help']);
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout:
        'node scripts/bench/security-route.mjs [--quick] [--duration S] [--connections N] [--rounds N] [--json FILE]\n',
      stderr: '',
    });
  });
});

describe('scripts/bench/reload-memory.mjs, briefly', () => {
  it('reloads the built petstore, reads its memory three times and prints the table', async () => {
    const { code, stdout, stderr } = await runToExit(path.join(BENCH, 'reload-memory.mjs'), {
      args: ['--reloads', '3', '--idle', '0.2'],
      cwd: ROOT,
      timeoutMs: 30_000,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const rows = stdout.split('\n').filter((l) => /^\| (started|right after|0\.2 s later)/.test(l));
    expect(
      rows.map((r) =>
        r
          .split('|')[1]
          .trim()
          .replace(/\(.*\)/, '()'),
      ),
    ).toEqual(['started, 20 requests', 'right after 3 reloads ()', '0.2 s later, idle']);
    for (const row of rows) {
      const [inUse, committed, rss] = row.split('|').slice(2, 5).map(Number);
      expect(inUse).toBeGreaterThan(0);
      expect(committed).toBeGreaterThanOrEqual(inUse);
      expect(rss).toBeGreaterThan(committed / 2);
    }
  });
});

describe('the rows a sub-benchmark hands over (scripts/bench/lib/sub-bench.mjs)', () => {
  const SUB = pathToFileURL(path.join(BENCH, 'lib', 'sub-bench.mjs')).href;
  /** readRows('route', <a file holding `text`, or none>): the rows, or the error's message. */
  const readRows = (text: string | undefined): unknown => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-rows-'));
    const file = path.join(dir, 'rows.json');
    if (text !== undefined) fs.writeFileSync(file, text);
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { readRows } from ${JSON.stringify(SUB)};
         try { console.log(JSON.stringify({ rows: readRows('route', ${JSON.stringify(file)}) })); }
         catch (err) { console.log(JSON.stringify({ error: err.message })); }`,
      ],
      { encoding: 'utf8' },
    );
    return JSON.parse(out);
  };

  it('takes the JSON array of rows the script wrote', () => {
    const rows = [{ case: 'none', rps: 10, p50: 1, p99: 2, rssMb: null, baseline: null }];
    expect(readRows(JSON.stringify(rows))).toEqual({ rows });
  });

  it.each([
    [undefined, 'route.mjs wrote no rows to its --json file'],
    ['| none | 10 |', 'route.mjs wrote rows that are not JSON: '],
    ['[]', 'route.mjs wrote no array of rows with a case name to its --json file'],
    ['{"case":"none"}', 'route.mjs wrote no array of rows with a case name to its --json file'],
    ['[{"rps":1}]', 'route.mjs wrote no array of rows with a case name to its --json file'],
    ['[null]', 'route.mjs wrote no array of rows with a case name to its --json file'],
  ])('refuses %j, naming the script', (text, message) => {
    const answer = readRows(text) as { error: string };
    expect(answer.error.startsWith(message)).toBe(true);
  });
});
