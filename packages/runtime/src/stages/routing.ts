import type { OpenApiSpec } from '@chain/openapi';
import { StatusError } from '@chain/errors';
import type { Stage } from '../exchange';
import { sendEmpty } from '../respond';

const MAX_ECHOED_PATH = 200;

/** A path as an error description may echo it: as sent, at most 200 characters. */
export const echoPath = (path: string): string =>
  path.length > MAX_ECHOED_PATH ? path.slice(0, MAX_ECHOED_PATH) + '…' : path;

/**
 * light-4j's specification handler: every request is routed through the service's OpenAPI spec.
 * A path not in the spec is ERR10007 (404); a method the path lacks is ERR10008 (405) with the
 * `Allow` header of the path; OPTIONS that the spec does not define answers 204 with `Allow`
 * (`OPTIONS *`: every method of the spec). On a match the context gets the operation and the
 * raw path parameters. This runs before security, as in light-4j: an unknown path is 404 to
 * anyone; path parameters are checked after security.
 */
export function routingStage(spec: OpenApiSpec): Stage {
  const allowAll = spec.allow;
  return (x) => {
    if (x.path === '*' && x.method === 'OPTIONS') return sendEmpty(x.res, 204, { Allow: allowAll });
    const found = spec.match(x.method, x.path);
    if (found.kind === 'found') {
      x.context.operation = found.operation;
      x.context.rawParams = found.params;
      return;
    }
    if (found.kind === 'no-path') throw new StatusError('ERR10007', [echoPath(x.path)]);
    if (x.method === 'OPTIONS') return sendEmpty(x.res, 204, { Allow: found.allow });
    throw new StatusError('ERR10008', [x.method, echoPath(x.path)], {
      headers: { Allow: found.allow },
    });
  };
}
