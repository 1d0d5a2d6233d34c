import fs from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { interpolate } from './interpolate';

export const DEFAULT_CONFIG_DIR = '/config';
const EXTENSIONS = ['.yml', '.yaml'];

export interface ConfigLoaderOptions {
  /** The service's bundled config folder (shipped with the service). */
  bundledDir: string;
  /**
   * The externalized folder that overrides the bundled one file by file. Defaults to
   * `CONFIG_DIR`, else `/config`; skipped when it does not exist.
   */
  overrideDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Where one config file was found. */
export interface ConfigSource {
  name: string;
  /** Absolute path of the file, or undefined when no folder has it. */
  file: string | undefined;
  /** Folder that relative paths inside the file resolve against. */
  dir: string;
}

/** Helpers a schema factory gets for the file being loaded. */
export interface SchemaHelpers {
  /**
   * A path to an existing file, resolved against the folder the config file came from.
   * Use `.prefault('name')` (not `.default`) so a default path is resolved too.
   */
  file(): z.ZodType<string, string>;
  /** A path resolved against the folder the config file came from, not checked. */
  path(): z.ZodType<string, string>;
  /** The folder relative paths resolve against. */
  dir: string;
}

export type SchemaFactory<T> = (helpers: SchemaHelpers) => z.ZodType<T>;

export class ConfigLoader {
  readonly bundledDir: string;
  /** The override folder in use, or undefined when it does not exist. */
  readonly overrideDir: string | undefined;
  /** An override folder that was named (option or CONFIG_DIR) but does not exist. */
  readonly missingOverride: string | undefined;
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: ConfigLoaderOptions) {
    this.env = options.env ?? process.env;
    this.bundledDir = path.resolve(options.bundledDir);
    const wanted = path.resolve(options.overrideDir ?? this.env.CONFIG_DIR ?? DEFAULT_CONFIG_DIR);
    // The override folder is skipped when absent (docs/configuration.md). A folder that was named explicitly
    // but is missing is reported so the service can warn about it (a typo should be visible).
    this.overrideDir = isDir(wanted) ? wanted : undefined;
    this.missingOverride =
      !this.overrideDir && (options.overrideDir !== undefined || this.env.CONFIG_DIR !== undefined)
        ? wanted
        : undefined;
  }

  /** Finds `<name>.yml` (or `.yaml`): the override folder first, then the bundled folder. */
  locate(name: string): ConfigSource {
    for (const dir of [this.overrideDir, this.bundledDir]) {
      if (!dir) continue;
      for (const ext of EXTENSIONS) {
        const file = path.join(dir, name + ext);
        if (fs.existsSync(file)) return { name, file, dir };
      }
    }
    return { name, file: undefined, dir: this.bundledDir };
  }

  /** The parsed, environment-expanded content of a file, or undefined when no folder has it. */
  raw(name: string): { source: ConfigSource; value: unknown } {
    const source = this.locate(name);
    if (!source.file) return { source, value: undefined };
    let text: string;
    try {
      text = fs.readFileSync(source.file, 'utf8');
    } catch (err) {
      throw new ConfigError(source.file, undefined, `cannot be read (${(err as Error).message})`);
    }
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { prettyErrors: false, lineCounter });
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      const { line } = lineCounter.linePos(first.pos[0]);
      // The parser's message only, never the offending text (it may hold a secret).
      const what = first.message.split('\n')[0].replace(/ at line \d+.*$/, '');
      throw new ConfigError(source.file, undefined, `not valid YAML (line ${line}): ${what}`);
    }
    const value = interpolate(doc.toJS(), this.env, source.file);
    return { source, value: value ?? undefined };
  }

  /**
   * Loads and checks one file. A file that no folder has is checked as an empty map, so the
   * schema's defaults apply; pass `required` to make its absence an error instead.
   */
  load<T>(name: string, schema: SchemaFactory<T>, options: { required?: boolean } = {}): T {
    const { source, value } = this.raw(name);
    const label = source.file ?? path.join(this.bundledDir, `${name}.yml`);
    if (value === undefined && options.required) {
      throw new ConfigError(label, undefined, 'file not found in the config folders');
    }
    const result = schema(helpersFor(source.dir)).safeParse(value ?? {});
    if (!result.success) throw toConfigError(label, result.error);
    return result.data;
  }
}

function helpersFor(dir: string): SchemaHelpers {
  return {
    dir,
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

function toConfigError(file: string, error: z.ZodError): ConfigError {
  const issue = error.issues[0];
  const key = [...issue.path];
  let reason = issue.message;
  if (issue.code === 'unrecognized_keys') {
    key.push(issue.keys[0]);
    reason = 'unknown key';
  } else if (issue.code === 'invalid_type') {
    reason = issue.message.replace(/^Invalid input: /, '');
  }
  const extra = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem(s))` : '';
  return new ConfigError(file, key.map(String).join('.') || undefined, reason + extra);
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
