import { configFile, z } from '@chain/config';
import { StatusError } from '@chain/errors';
import type { Verifier } from '@chain/security';
import type { Stage } from './exchange.js';
import { sendJson } from './respond.js';

/** light-4j's config-reload module: `POST /adm/modules` reloads, configReload.yml switches it. */
export const RELOAD_PATH = '/adm/modules';

export const configReloadSchema = configFile(
  () =>
    z.strictObject({
      enabled: z.boolean().default(false),
      // Ours: the scope a verified token must hold to reload.
      scope: z.string().min(1).default('admin'),
    }),
  {},
);

/** The configuration that serves; set by `startService`, which also swaps it. */
export interface ConfigRevision {
  generation: number;
  hash: string;
  /**
   * Re-reads the files: undefined once the next request gets them, else why not (one line).
   * `everywhere`: the other workers too (asked at the endpoint, which one worker answers).
   */
  reload(everywhere?: boolean): Promise<string | undefined>;
}

/** An admin endpoint: a verified token with configReload.yml `scope`, as light-4j's /adm paths. */
export function configReloadStage(
  { enabled, scope }: z.output<ReturnType<typeof configReloadSchema>>,
  verifier: Verifier,
  revision: () => ConfigRevision | undefined,
): Stage {
  return async (x) => {
    if (x.path !== RELOAD_PATH) return;
    const reloads = revision();
    if (!enabled || !reloads) {
      throw new StatusError('ERR20017', [
        RELOAD_PATH,
        'configReload.yml enabled: true turns it on',
      ]);
    }
    if (x.method !== 'POST') {
      throw new StatusError('ERR10008', [x.method, RELOAD_PATH], { headers: { Allow: 'POST' } });
    }
    const verdict = await verifier.verify({
      method: x.method,
      path: x.path,
      headers: x.req.headers,
      requiredScopes: [scope],
      clientCertThumbprint: x.context.clientCertThumbprint,
      correlationId: x.context.trace.correlationId,
      remoteAddress: x.req.socket?.remoteAddress,
    });
    if (!verdict.ok) throw verdict.refusal.error;
    // Passed unverified (security.yml skipPathPrefixes): no caller, no reload.
    if (!verdict.auth) throw new StatusError('ERR10002');
    // Whatever security.yml enableVerifyScope says.
    const { scopes } = verdict.auth;
    if (!scopes.includes(scope)) {
      throw new StatusError('ERR10005', [`[${scopes.join(', ')}]`, `[${scope}]`]);
    }
    const refused = await reloads.reload(true);
    if (refused !== undefined) throw new StatusError('ERR20018', [refused]);
    sendJson(x.res, 200, { generation: reloads.generation, hash: reloads.hash });
  };
}
