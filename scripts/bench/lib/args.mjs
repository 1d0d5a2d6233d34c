// The one command-line reader of every bench script: node:util's parseArgs, strict (an unknown
// option, a missing value, a value given to a flag, a stray argument are errors), and one table
// of value kinds, each checked here and nowhere else. A bad command line exits 2 with a message
// naming the option. It imports nothing but node:util: the hop and load-generator processes
// under measurement use it too.
import { parseArgs } from 'node:util';

/** A command line the script cannot run with (exit 2). */
export class UsageError extends Error {}

const COUNT = /^[1-9][0-9]*$/;
const DECIMAL = /^(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$/;

/**
 * The kinds of option value: `read` turns the text into the value, or returns undefined when the
 * text is not one (then the message says the option `must be` …).
 */
export const KINDS = {
  flag: { type: 'boolean' },
  /** A whole number above 0: connections, rounds, tokens, workers, a rate. */
  count: {
    type: 'string',
    must: 'a positive integer',
    read: (text) => (COUNT.test(text) ? Number(text) : undefined),
  },
  /** A duration above 0, fractions allowed. */
  seconds: {
    type: 'string',
    must: 'a positive number of seconds',
    read: (text) => (DECIMAL.test(text) && Number(text) > 0 ? Number(text) : undefined),
  },
  /** Comma-separated names, blanks dropped; at least one. */
  list: {
    type: 'string',
    must: 'a comma-separated list of names',
    read: (text) => {
      const names = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      return names.length ? names : undefined;
    },
  },
  /** An http or https URL. */
  url: {
    type: 'string',
    must: 'an http or https URL',
    read: (text) => {
      try {
        return ['http:', 'https:'].includes(new URL(text).protocol) ? text : undefined;
      } catch {
        return undefined;
      }
    },
  },
  /** A header line `Name: value`, read as [name, value]. */
  header: {
    type: 'string',
    must: 'a header line "Name: value"',
    read: (text) => {
      const colon = text.indexOf(':');
      return colon > 0 ? [text.slice(0, colon).trim(), text.slice(colon + 1).trim()] : undefined;
    },
  },
  /** Any text but the empty one (a file, a folder, a header line, a scope). */
  text: { type: 'string', must: 'not empty', read: (text) => (text === '' ? undefined : text) },
};

/**
 * Reads `argv` against `spec`: option name -> { kind (a key of KINDS), default (a value, or a
 * function of the values read: `(v) => (v.quick ? 1 : 4)`), choices, multiple, required }.
 * Resolves with the values by option name and `given`, the names set on the command line.
 * Throws a UsageError naming the option.
 */
export function parseOptions(argv, spec) {
  // `pnpm bench -- --only a` hands the script its `--` too (pnpm 10): a leading one is dropped.
  if (argv[0] === '--') argv = argv.slice(1);
  const options = {};
  for (const [name, o] of Object.entries(spec)) {
    const kind = KINDS[o.kind];
    if (!kind) throw new TypeError(`--${name}: no kind ${o.kind}`);
    options[name] = { type: kind.type, ...(o.multiple ? { multiple: true } : {}) };
  }
  let raw;
  try {
    raw = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    if (String(err.code).startsWith('ERR_PARSE_ARGS')) throw new UsageError(err.message);
    throw err;
  }
  const values = {};
  const given = new Set(Object.keys(raw));
  for (const [name, o] of Object.entries(spec)) {
    const kind = KINDS[o.kind];
    if (!given.has(name)) continue;
    const read = (text) => {
      const value = kind.read(text);
      if (value === undefined) {
        throw new UsageError(`--${name} must be ${kind.must}, got ${JSON.stringify(text)}`);
      }
      if (o.choices && !o.choices.includes(value)) {
        throw new UsageError(
          `--${name} must be one of ${o.choices.join(', ')}, got ${JSON.stringify(text)}`,
        );
      }
      return value;
    };
    values[name] =
      o.kind === 'flag' ? raw[name] : o.multiple ? raw[name].map(read) : read(raw[name]);
  }
  for (const [name, o] of Object.entries(spec)) {
    if (given.has(name)) continue;
    if (o.required) throw new UsageError(`--${name} is required`);
    const fallback = typeof o.default === 'function' ? o.default(values) : o.default;
    values[name] = fallback ?? (o.kind === 'flag' ? false : o.multiple ? [] : undefined);
  }
  return { values, given };
}

/**
 * The command line of this script read against `spec` (with `--help`): on `--help` the usage is
 * printed and the script exits 0; on a bad command line the message and the usage go to stderr
 * and it exits 2.
 */
export function readOptions(spec, usage, argv = process.argv.slice(2)) {
  try {
    const { values, given } = parseOptions(argv, { ...spec, help: { kind: 'flag' } });
    if (values.help) {
      console.log(usage);
      process.exit(0);
    }
    return { values, given };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n${usage}`);
    process.exit(2);
  }
}
