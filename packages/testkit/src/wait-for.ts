/** Thrown by a probe of waitFor to stop waiting at once (the state can no longer come). */
export class GiveUp extends Error {}

/**
 * Calls `probe` until it returns a value other than undefined, at most `timeoutMs`; rejects with
 * `what` and the last error or value otherwise. For states that only an outside signal ends
 * (a health status, a line in a log, a report in a database), never as a fixed delay.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 60_000, intervalMs = 250 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      last = undefined;
    } catch (err) {
      if (err instanceof GiveUp) throw new Error(`${what}: ${err.message}`, { cause: err });
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`${what}: not within ${timeoutMs} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
