import { StatusError } from '@chain/errors';
import type { Verifier } from '@chain/security';
import { configReloadStage, type ConfigRevision } from '../src/config-reload.js';
import type { Exchange } from '../src/exchange.js';

// POST /adm/modules in process, each refusal by its code (test/e2e/reload.test.ts reloads real
// processes through it).
const x = (method: string, path = '/adm/modules') =>
  ({
    method,
    path,
    req: { headers: {} },
    context: { trace: { correlationId: 'c' } },
  }) as unknown as Exchange;
const verifierAnswering = (verdict: unknown) =>
  ({ verify: async () => verdict }) as unknown as Verifier;
const revision = (refused?: string): ConfigRevision => ({
  generation: 2,
  hash: 'h',
  reload: async () => refused,
});
const ON = { enabled: true, scope: 'admin' };
const codeOf = async (p: unknown) => {
  try {
    await p;
  } catch (err) {
    return (err as StatusError).body.code;
  }
  return 'no refusal';
};

describe('configReloadStage', () => {
  it('leaves other paths alone', async () => {
    expect(
      await configReloadStage(ON, verifierAnswering({}), () => revision())(x('GET', '/v1')),
    ).toBeUndefined();
  });

  it('off: 404 ERR20017; not POST: 405 ERR10008', async () => {
    const off = configReloadStage({ ...ON, enabled: false }, verifierAnswering({}), () =>
      revision(),
    );
    expect(await codeOf(off(x('POST')))).toBe('ERR20017');
    const on = configReloadStage(ON, verifierAnswering({}), () => revision());
    expect(await codeOf(on(x('GET')))).toBe('ERR10008');
  });

  it('a refused token, no caller, a missing scope, a refused file: each its code', async () => {
    const refusal = new StatusError('ERR10001');
    const stage = (verdict: unknown, refused?: string) =>
      configReloadStage(ON, verifierAnswering(verdict), () => revision(refused))(x('POST'));
    expect(await codeOf(stage({ ok: false, refusal: { error: refusal } }))).toBe('ERR10001');
    expect(await codeOf(stage({ ok: true }))).toBe('ERR10002');
    expect(await codeOf(stage({ ok: true, auth: { scopes: ['read'] } }))).toBe('ERR10005');
    expect(await codeOf(stage({ ok: true, auth: { scopes: ['admin'] } }, 'bad file'))).toBe(
      'ERR20018',
    );
  });
});
