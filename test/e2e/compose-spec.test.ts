import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Scalar, YAMLMap, YAMLSeq } from 'yaml';
import {
  COMPOSE_FILES,
  YAML,
  composeCerts,
  parseCompose,
  readCompose,
  composeSpecErrors,
  composeSpecSchema,
  composeV1Config,
  composeV1ConfigOf,
  ROOT,
} from '@chain/testkit';

// The compose files as Compose v2 reads them, without Docker. v2 (the `docker compose` plugin
// most users run) loads a file with compose-go, which validates it against the compose
// specification's JSON schema and then warns on what the specification deprecates; v1 (Debian's
// docker-compose 1.29, the only Compose installable here, run by compose-files.test.ts) has its
// own older schema and YAML reader. v2 cannot be installed here, so the specification's schema
// is applied with ajv, and every construct the two read differently is tried on both: on the
// schema, and on the real docker-compose 1.29.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const FILES = Object.entries(COMPOSE_FILES);
const text = (file: string) => fs.readFileSync(file, 'utf8');
const doc = (file: string) =>
  YAML.parse(text(file)) as { services?: Record<string, unknown>; [key: string]: unknown };

/** A one-service file (with `busybox`, which `config` never pulls) plus the given YAML. */
const BASE = 'services:\n  a:\n    image: busybox\n';

beforeAll(() => composeCerts());

describe('the compose specification schema (what Compose v2 validates a file with)', () => {
  it('is the draft-07 schema of the specification, closed to unknown keys but x- ones', () => {
    expect(composeSpecSchema.$schema).toBe('https://json-schema.org/draft-07/schema');
    expect(composeSpecSchema.$id).toBe('compose_spec.json');
    expect(composeSpecSchema.additionalProperties).toBe(false);
    expect(composeSpecSchema.patternProperties).toEqual({ '^x-': {} });
    for (const name of ['service', 'healthcheck', 'network', 'volume']) {
      const { additionalProperties, patternProperties } = composeSpecSchema.definitions[name];
      expect({ name, additionalProperties, patternProperties }).toEqual({
        name,
        additionalProperties: false,
        patternProperties: { '^x-': {} },
      });
    }
  });

  it.each(FILES)('%s: valid', (_, file) => {
    expect(composeSpecErrors(doc(file))).toEqual([]);
  });

  it.each([
    ['a misspelled top-level key', 'servces: {}\n', '', 'servces'],
    ['a misspelled service key', '    netwroks: [localnet]\n', '/services/a', 'netwroks'],
    [
      'a misspelled health check key',
      "    healthcheck:\n      test: ['CMD', 'true']\n      intervall: 5s\n",
      '/services/a/healthcheck',
      'intervall',
    ],
    [
      'a misspelled network key',
      'networks:\n  localnet:\n    externall: true\n',
      '/networks/localnet',
      'externall',
    ],
    ['a misspelled build key', '    build:\n      contxt: ..\n', '/services/a/build', 'contxt'],
  ])('refuses %s, naming it', (_, extra, instancePath, key) => {
    const errors = composeSpecErrors(YAML.parse(BASE + extra));
    expect(errors).toContainEqual(
      expect.objectContaining({
        keyword: 'additionalProperties',
        instancePath,
        params: { additionalProperty: key },
      }),
    );
  });

  it('refuses a value of the wrong type', () => {
    const errors = composeSpecErrors(YAML.parse(`${BASE}    ports: '7441:7441'\n`));
    expect(errors).toContainEqual(
      expect.objectContaining({ instancePath: '/services/a/ports', keyword: 'type' }),
    );
  });

  it('accepts x- extensions at the top, in a service and in a network', () => {
    const file = `x-common: &common\n  restart: unless-stopped\n${BASE}    <<: *common\n    x-note: kept\nnetworks:\n  localnet:\n    external: true\n    x-owner: ops\n`;
    expect(composeSpecErrors(YAML.parse(file, { merge: true }))).toEqual([]);
  });

  it('leaves the document as it is (nothing removed, filled in or coerced on the way)', () => {
    const parsed = YAML.parse(`${BASE}    netwroks: [localnet]\n    ports: ['7441:7441']\n`);
    const before = structuredClone(parsed) as unknown;
    expect(composeSpecErrors(parsed)).not.toEqual([]);
    expect(parsed).toEqual(before);
  });
});

/**
 * Constructs Compose v1 (docker-compose 1.29) and v2 read differently, each tried on the
 * specification's schema (v2) and on the real docker-compose 1.29 (`null`: v1 accepts it, else
 * the line of v1's refusal), and why the files are written as they are.
 */
const CONSTRUCTS: [construct: string, file: string, spec: boolean, v1: string | null][] = [
  // v2 ignores `version` and warns that it is obsolete (compose-go's loader); v1.29 reads a
  // file without one but with `services` as the compose specification: the files have none.
  ['no version', BASE, true, null],
  ["version: '3.8'", `version: '3.8'\n${BASE}`, true, null],
  // The project name in the file: v2 reads it, v1.29's schema has no such key. The files leave
  // it out; every command gives -p.
  [
    'a top-level name',
    `name: chain-app\n${BASE}`,
    true,
    "'name' does not match any of the regexes: '^x-'",
  ],
  // An existing network: `external: true` with `name:` in both; v2 warns on the older
  // `external: {name: ...}` form, so the files use the first.
  [
    'external: true and name',
    `${BASE}networks:\n  n:\n    external: true\n    name: n\n`,
    true,
    null,
  ],
  ['external: {name}', `${BASE}networks:\n  n:\n    external:\n      name: n\n`, true, null],
  // Start order and health: the long form with a condition, start_period and profiles are read
  // by both; `required` (v2.20) and start_interval (v2.21) refuse the file in v1.
  [
    'depends_on with a condition, a health check, profiles',
    `${BASE}    depends_on:\n      b:\n        condition: service_healthy\n    profiles: [debug]\n  b:\n    image: busybox\n    healthcheck:\n      test: ['CMD', 'true']\n      interval: 5s\n      timeout: 2s\n      retries: 3\n      start_period: 10s\n`,
    true,
    null,
  ],
  [
    'depends_on … required',
    `${BASE}    depends_on:\n      b:\n        condition: service_started\n        required: false\n  b:\n    image: busybox\n`,
    true,
    "services.a.depends_on contains unsupported option: 'required'",
  ],
  [
    'healthcheck start_interval',
    `${BASE}    healthcheck:\n      test: ['CMD', 'true']\n      start_interval: 1s\n`,
    true,
    "services.a.healthcheck value 'start_interval' does not match any of the regexes: '^x-'",
  ],
  // An environment value: the specification takes a boolean, v1 only text, numbers and null.
  [
    'an unquoted boolean in environment',
    `${BASE}    environment:\n      X: true\n`,
    true,
    'services.a.environment.X contains true, which is an invalid type, it should be a string, number, or a null',
  ],
  // Both refuse an unknown key, and both pass x- extensions.
  [
    'a misspelled key',
    `${BASE}    netwroks: [n]\n`,
    false,
    "Unsupported config option for services.a: 'netwroks'",
  ],
  ['x- extensions', `x-common: {}\n${BASE}    x-note: kept\n`, true, null],
];

describe('what Compose v1 (docker-compose 1.29) and v2 read differently', () => {
  it.each(CONSTRUCTS)('%s: as the specification and as v1 read it', (_, file, spec, v1) => {
    expect(composeSpecErrors(YAML.parse(file)).length === 0).toBe(spec);
    const run = composeV1Config(file);
    if (v1 === null)
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    else {
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(v1);
    }
  });

  it('no file has `name` (v1: refused); `version` changes nothing: v1 reads each file the same without it', () => {
    for (const [, file] of FILES) {
      expect(Object.keys(doc(file))).not.toContain('name');
      expect(doc(file).version).toBe('3.8');
      // v2 ignores `version` (with a warning); v1.29 without it takes the compose specification
      // format: the very reading of the file with version '3.8' (only the version it prints
      // differs). The copy without a version lives elsewhere; --project-directory keeps both
      // reading paths from compose/.
      const withoutVersion = path.join(
        fs.mkdtempSync(path.join(os.tmpdir(), 'compose-version-')),
        path.basename(file),
      );
      fs.writeFileSync(withoutVersion, text(file).replace(/^version: '3\.8'\n/m, ''));
      const args = ['--project-directory', path.dirname(file)];
      const without = composeV1ConfigOf(withoutVersion, { args, cwd: ROOT });
      const withIt = composeV1ConfigOf(file, { args, cwd: ROOT });
      expect([without.status, withIt.status]).toEqual([0, 0]);
      const unversioned = (out: string) => out.replace(/^version: .*\n/m, '');
      expect(unversioned(without.stdout)).toBe(unversioned(withIt.stdout));
      expect(without.stdout).toMatch(/^version: '3\.9'$/m);
      expect(withIt.stdout).toMatch(/^version: '3\.8'$/m);
      expect(unversioned(without.stdout)).toContain(`context: ${ROOT}\n`);
    }
  });

  it('the project name comes from -p, the same option in both, on every command of the docs', () => {
    const projects = { app: 'chain-app', infra: 'chain-infra' } as const;
    // The README and every page of docs/ (the Compose commands are in docs/operations.md).
    const docs = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)]
      .filter((f) => f.endsWith('.md'))
      .map((f) => text(path.join(ROOT, f)))
      .join('\n');
    for (const [key, file] of FILES) {
      const project = projects[key as keyof typeof projects];
      const relative = path.relative(ROOT, file);
      for (const command of ['docker compose', 'docker-compose']) {
        expect(text(file)).toContain(`${command} -p ${project} -f ${relative} up -d --build`);
      }
      // Every Compose command of the docs on this file names its project.
      const commands = docs.match(new RegExp(`docker[ -]compose .*-f ${relative}.*`, 'g'))!;
      expect(commands.length).toBeGreaterThan(2);
      for (const c of commands) expect(c).toContain(`-p ${project} -f ${relative}`);
      expect(composeV1ConfigOf(file, { args: ['-p', project], cwd: ROOT }).status).toBe(0);
    }
  });

  it('the network: external, named localnet, in both readings', () => {
    for (const [, file] of FILES) {
      expect(doc(file).networks).toEqual({ localnet: { external: true, name: 'localnet' } });
      const v1 = YAML.parse(composeV1ConfigOf(file, { cwd: ROOT }).stdout) as {
        networks: unknown;
      };
      expect(v1.networks).toEqual({ localnet: { external: true, name: 'localnet' } });
    }
  });

  it('build contexts and mounts resolve against the file folder, not the working directory', () => {
    // v2 resolves them against the project directory, the first -f file's folder unless
    // --project-directory says otherwise (compose-go's ResolveRelativePaths); v1 likewise.
    // docker-compose run from elsewhere still finds the repository root.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-cwd-'));
    for (const [, file] of FILES) {
      const run = composeV1ConfigOf(file, { cwd: elsewhere });
      expect(run.status).toBe(0);
      const read = parseCompose(run.stdout, path.dirname(file));
      const asWritten = readCompose(file);
      for (const service of read.services.filter((s) => s.context !== undefined)) {
        expect(service.context).toBe(ROOT);
        expect(service.volumes[0].source.startsWith(path.join(ROOT, 'config') + path.sep)).toBe(
          true,
        );
      }
      const contexts = (c: typeof read) => c.services.map((s) => [s.name, s.context]).sort();
      expect(contexts(read)).toEqual(contexts(asWritten));
      // As written: relative, from compose/ up to the root.
      expect(text(file)).toMatch(/^ {6}context: \.\.$/m);
    }
  });

  it('every port mapping is quoted, every environment value text', () => {
    // v1 reads YAML 1.1, where an unquoted 22:22 is the base-60 number 1342 (a container port,
    // without a word); v2 reads YAML 1.2, where it is the text 22:22. v1 also refuses an
    // unquoted boolean in environment (above), which the specification takes.
    const unquoted = composeV1Config(`${BASE}    ports:\n      - 22:22\n`);
    expect(YAML.parse(unquoted.stdout)).toMatchObject({
      services: { a: { ports: [{ target: 1342 }] } },
    });
    for (const [, file] of FILES) {
      const services = YAML.parseDocument(text(file)).get('services') as YAMLMap<string, YAMLMap>;
      let ports = 0;
      for (const { key, value } of services.items) {
        for (const port of (value!.get('ports', true) as YAMLSeq<Scalar> | undefined)?.items ??
          []) {
          ports++;
          expect({ key, value: port.value, type: port.type }).toEqual({
            key,
            value: expect.stringMatching(/^\d+:\d+$/),
            type: expect.stringMatching(/^QUOTE_(SINGLE|DOUBLE)$/),
          });
        }
        const environment = (value!.get('environment') as YAMLMap | undefined)?.toJSON() ?? {};
        for (const [name, v] of Object.entries(environment as Record<string, unknown>)) {
          expect({ key, name, v }).toEqual({ key, name, v: expect.any(String) });
        }
      }
      // One each, but for a service started only with its profile (redis: not on the host).
      const published = services.items.filter(({ value }) => !value!.has('profiles'));
      expect(ports).toBe(published.length);
    }
  });
});
