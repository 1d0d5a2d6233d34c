import { ConfigError } from '@chain/errors';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface PathParam {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean';
}

export interface Operation {
  /** With the server base path, e.g. `/v2/pet/{petId}`. */
  path: string;
  /** Lower case. */
  method: string;
  /** light-4j's endpoint name, `/v2/pet/{petId}@get`: the metrics tag. */
  endpoint: string;
  scopes: string[];
  params: PathParam[];
}

interface CompiledPath {
  regex: RegExp;
  names: string[];
  operations: Map<string, Operation>;
  allow: string;
}

type SpecMatch =
  | { kind: 'found'; operation: Operation; params: Record<string, string> }
  | { kind: 'no-path' }
  | { kind: 'no-method'; allow: string };

export class OpenApiSpec {
  private readonly exact = new Map<string, CompiledPath>();
  private readonly templated: CompiledPath[] = [];

  constructor(document: unknown, file = 'openapi.yaml') {
    const doc = asObject(document, file, undefined);
    if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.')) {
      throw new ConfigError(file, 'openapi', 'an OpenAPI 3 document is expected');
    }
    const basePath = serverBasePath(doc.servers);
    const paths = asObject(doc.paths, file, 'paths');
    for (const [template, item] of Object.entries(paths)) {
      const pathItem = asObject(item, file, `paths.${template}`);
      const full = (basePath + template).replace(/\/{2,}/g, '/');
      const compiled = compile(full);
      const shared = Array.isArray(pathItem.parameters) ? pathItem.parameters : [];
      for (const method of METHODS) {
        if (!(method in pathItem)) continue;
        const op = asObject(pathItem[method], file, `paths.${template}.${method}`);
        const own = Array.isArray(op.parameters) ? op.parameters : [];
        compiled.operations.set(method, {
          path: full,
          method,
          endpoint: `${full}@${method}`,
          scopes: scopesOf(op.security ?? doc.security),
          params: pathParams([...shared, ...own]),
        });
      }
      compiled.allow = allowHeader(compiled.operations.keys());
      if (compiled.names.length === 0) this.exact.set(full, compiled);
      else this.templated.push(compiled);
    }
  }

  /** The `Allow` header of `OPTIONS *`: every method of the spec. */
  get allow(): string {
    return allowHeader(this.operations().map((op) => op.method));
  }

  operations(): Operation[] {
    return [...this.exact.values(), ...this.templated].flatMap((p) => [...p.operations.values()]);
  }

  match(method: string, path: string): SpecMatch {
    const normalized = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const m = method.toLowerCase();
    const exact = this.exact.get(normalized);
    if (exact) return pick(exact, m, {});
    for (const candidate of this.templated) {
      const found = candidate.regex.exec(normalized);
      if (!found) continue;
      const params = Object.fromEntries(candidate.names.map((name, i) => [name, found[i + 1]]));
      return pick(candidate, m, params);
    }
    return { kind: 'no-path' };
  }
}

function pick(compiled: CompiledPath, method: string, params: Record<string, string>): SpecMatch {
  const operation =
    compiled.operations.get(method) ??
    // HEAD is served by GET, as HTTP servers do.
    (method === 'head' ? compiled.operations.get('get') : undefined);
  return operation
    ? { kind: 'found', operation, params }
    : { kind: 'no-method', allow: compiled.allow };
}

/** RFC 9110: the methods of a resource, HEAD wherever GET is, and OPTIONS, which every path answers. */
function allowHeader(lowerCase: Iterable<string>): string {
  const methods = new Set([...lowerCase].map((m) => m.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods].join(', ');
}

function compile(template: string): CompiledPath {
  // Split at `{name}`: the odd parts are the parameter names.
  const parts = template.split(/\{([^}]+)\}/);
  const source = parts
    .map((part, i) => (i % 2 ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const names = parts.filter((_, i) => i % 2);
  return { regex: new RegExp(`^${source}$`), names, operations: new Map(), allow: '' };
}

function serverBasePath(servers: unknown): string {
  if (!Array.isArray(servers) || servers.length === 0) return '';
  const url = (servers[0] as { url?: unknown }).url;
  if (typeof url !== 'string') return '';
  const path = url.replace(/^[a-z]+:\/\/[^/]*/i, '');
  return path === '/' ? '' : path.replace(/\/$/, '');
}

function scopesOf(security: unknown): string[] {
  if (!Array.isArray(security)) return [];
  const lists = security.flatMap((r) => (r && typeof r === 'object' ? Object.values(r) : []));
  const scopes = lists.flatMap((list) => (Array.isArray(list) ? list : []));
  return [...new Set(scopes.filter((s): s is string => typeof s === 'string'))];
}

function pathParams(parameters: unknown[]): PathParam[] {
  return parameters.flatMap((p): PathParam[] => {
    const param = p as { in?: unknown; name?: unknown; schema?: { type?: unknown } };
    if (param?.in !== 'path' || typeof param.name !== 'string') return [];
    const type = param.schema?.type;
    const typed = type === 'integer' || type === 'number' || type === 'boolean';
    return [{ name: param.name, type: typed ? type : 'string' }];
  });
}

function asObject(value: unknown, file: string, key: string | undefined): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(file, key, 'a map is expected');
  }
  return value as Record<string, unknown>;
}
