import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '@chain/errors';
import {
  extraKeysAt,
  keyAsWritten,
  prepareKeys,
  type ConfigWarning,
  type FileKeys,
} from './file-keys.js';
import { interpolate } from './interpolate.js';
import { closestKey, schemaKeysAt } from './key-suggest.js';
import { parseYamlDocument } from './yaml-text.js';

const EXTENSIONS = ['.yml', '.yaml'];

export interface ConfigLoaderOptions {
  bundledDir: string;
  /** Overrides the bundled folder file by file; default `CONFIG_DIR`, else `/config`. */
  overrideDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Paths resolve against the folder the config file came from. */
export interface SchemaHelpers {
  /** An existing file. Use `.prefault('name')` (not `.default`) so a default path is resolved too. */
  file(): z.ZodType<string, string>;
  path(): z.ZodType<string, string>;
  warn(key: string, message: string): void;
}

export type SchemaFactory<T> = ((helpers: SchemaHelpers) => z.ZodType<T>) & {
  readonly keys?: FileKeys;
};

export function configFile<T>(
  factory: (helpers: SchemaHelpers) => z.ZodType<T>,
  keys: FileKeys,
): SchemaFactory<T> {
  return Object.assign((helpers: SchemaHelpers) => factory(helpers), { keys });
}

export class ConfigLoader {
  readonly bundledDir: string;
  readonly overrideDir: string | undefined;
  /** An override folder named (option or CONFIG_DIR) but missing: a typo should be visible. */
  readonly missingOverride: string | undefined;
  readonly warnings: ConfigWarning[] = [];
  private readonly env: NodeJS.ProcessEnv;
  /** Names asked for; values.yml is read by every `${…}` expansion. */
  private readonly read = new Set<string>(['values']);
  private valuesMap?: Record<string, unknown>;
  /** Every file read, by path: what `digest` hashes. */
  private readonly texts = new Map<string, string>();

  constructor(options: ConfigLoaderOptions) {
    this.env = options.env ?? process.env;
    this.bundledDir = path.resolve(options.bundledDir);
    const wanted = path.resolve(options.overrideDir ?? this.env.CONFIG_DIR ?? '/config');
    const isDir = fs.existsSync(wanted) && fs.statSync(wanted).isDirectory();
    this.overrideDir = isDir ? wanted : undefined;
    this.missingOverride =
      !this.overrideDir && (options.overrideDir !== undefined || this.env.CONFIG_DIR !== undefined)
        ? wanted
        : undefined;
  }

  /**
   * The override folder first, then the bundled one. With several names (light-rest-4j's
   * `openapi-security` before `security`), the first found in the override folder wins.
   */
  locate(name: string | readonly string[]): { name: string; file?: string; dir: string } {
    const names = typeof name === 'string' ? [name] : name;
    for (const n of names) this.read.add(n);
    for (const dir of [this.overrideDir, this.bundledDir]) {
      if (!dir) continue;
      for (const n of names) {
        for (const ext of EXTENSIONS) {
          const file = path.join(dir, n + ext);
          if (fs.existsSync(file)) return { name: n, file, dir };
        }
      }
    }
    return { name: names[0], file: undefined, dir: this.bundledDir };
  }

  /** YAML files of the override folder that no load asked for (light-4j's handler.yml, say). */
  unreadFiles(): string[] {
    if (!this.overrideDir) return [];
    return fs
      .readdirSync(this.overrideDir)
      .filter((f) => EXTENSIONS.includes(path.extname(f)))
      .filter((f) => !this.read.has(path.basename(f, path.extname(f))))
      .map((f) => path.join(this.overrideDir!, f));
  }

  /** The SHA-256 of the files read so far, with their paths (16 hex digits): which config this is. */
  digest(): string {
    const hash = createHash('sha256');
    for (const [file, text] of [...this.texts].sort()) hash.update(`${file}\0${text}\0`);
    return hash.digest('hex').slice(0, 16);
  }

  private values(): Readonly<Record<string, unknown>> {
    if (this.valuesMap) return this.valuesMap;
    const source = this.locate('values');
    const values = source.file ? (this.parse(source.file) ?? {}) : {};
    if (typeof values !== 'object' || Array.isArray(values)) {
      throw new ConfigError(source.file!, undefined, 'is not a map of names to values');
    }
    this.valuesMap = values as Record<string, unknown>;
    return this.valuesMap;
  }

  raw(name: string | readonly string[]) {
    const source = this.locate(name);
    if (!source.file) return { source, value: undefined };
    const parsed = this.parse(source.file);
    const value = interpolate(parsed, { env: this.env, values: this.values() }, source.file);
    return { source, value: value ?? undefined };
  }

  private parse(file: string): unknown {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(file, undefined, `cannot be read (${(err as Error).message})`);
    }
    this.texts.set(file, text);
    const doc = parseYamlDocument(text);
    const [first] = doc.errors;
    if (first) {
      const { line } = first.linePos![0];
      // The parser's message only, never the offending text (it may hold a secret).
      const what = first.message.split('\n')[0].replace(/ at line \d+.*$/, '');
      throw new ConfigError(file, undefined, `not valid YAML (line ${line}): ${what}`);
    }
    return doc.toJS() as unknown;
  }

  /**
   * A file that no folder has is checked as an empty map unless `required`. A file there but
   * empty is an error: an empty security.yml must not mean "verification off".
   */
  load<T>(
    name: string | readonly string[],
    schema: SchemaFactory<T>,
    options: { required?: boolean } = {},
  ): T {
    const { source, value } = this.raw(name);
    const label = source.file ?? path.join(this.bundledDir, `${source.name}.yml`);
    const refuse = (reason: string) => new ConfigError(label, undefined, reason);
    if (source.file === undefined && options.required) {
      throw refuse('file not found in the config folders');
    }
    if (source.file !== undefined && value === undefined) {
      throw refuse('is empty; give its keys, or remove the file to use the defaults');
    }
    if (value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
      throw refuse('is not a map of keys (is the file cut short?)');
    }
    return this.check(label, source.dir, value ?? {}, schema);
  }

  /** Keys as a file would parse to, checked as `load` checks a file's; paths resolve against `dir`. */
  check<T>(label: string, dir: string, value: object, schema: SchemaFactory<T>): T {
    const prepared = prepareKeys(label, value, schema.keys);
    const notes: ConfigWarning[] = [];
    const zod = schema(
      helpersFor(dir, (key, message) => notes.push({ file: label, key, message })),
    );
    const result = zod.safeParse(prepared.value);
    if (!result.success) {
      throw toConfigError(label, result.error.issues, zod, schema.keys, prepared.moved);
    }
    this.warnings.push(...prepared.warnings, ...notes);
    return result.data;
  }
}

function helpersFor(dir: string, warn: SchemaHelpers['warn']): SchemaHelpers {
  return {
    warn,
    path: () => z.string().transform((p) => path.resolve(dir, p)),
    file: () =>
      z.string().transform((p, ctx) => {
        const abs = path.resolve(dir, p);
        if (!fs.existsSync(abs)) {
          ctx.addIssue({ code: 'custom', message: `file not found: ${abs}` });
          return z.NEVER;
        }
        return abs;
      }),
  };
}

/** zod's first issue, at the key as the file wrote it; an unknown key with the closest known one. */
function toConfigError(
  file: string,
  issues: z.core.$ZodIssue[],
  zod: z.ZodType,
  keys: FileKeys | undefined,
  moved: [to: string, from: string][],
): ConfigError {
  const [issue] = issues;
  const at = issue.path.map(String);
  const extra = issues.length > 1 ? ` (and ${issues.length - 1} more problem(s))` : '';
  if (issue.code === 'unrecognized_keys') {
    const key = keyAsWritten([...at, issue.keys[0]].join('.'), moved);
    const known = [...schemaKeysAt(zod, at), ...extraKeysAt(keys, key.split('.').slice(0, -1))];
    const suggestion = closestKey(issue.keys[0], known);
    const hint = suggestion ? `; did you mean "${suggestion}"?` : '';
    return new ConfigError(file, key, `unknown key${hint}${extra}`);
  }
  const reason =
    issue.code === 'invalid_type' ? issue.message.replace(/^Invalid input: /, '') : issue.message;
  return new ConfigError(file, keyAsWritten(at.join('.'), moved) || undefined, reason + extra);
}
