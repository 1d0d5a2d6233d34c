export function tokenStats() {
  const perClient = {
    tokenRequests: new Map<string, number>(),
    tokensIssued: new Map<string, number>(),
    codeRequests: new Map<string, number>(),
    codesIssued: new Map<string, number>(),
    introspectionRequests: new Map<string, number>(),
  };
  const key = { requests: 0, second: -1, inSecond: 0, peak: 0 };
  return {
    count(counter: keyof typeof perClient, clientId: string): void {
      perClient[counter].set(clientId, (perClient[counter].get(clientId) ?? 0) + 1);
    },
    keyRequest(): void {
      key.requests += 1;
      const second = Math.floor(Date.now() / 1000);
      key.inSecond = second === key.second ? key.inSecond + 1 : 1;
      key.second = second;
      key.peak = Math.max(key.peak, key.inSecond);
    },
    snapshot: () => ({
      ...Object.fromEntries(
        Object.entries(perClient).map(([name, counts]) => [name, Object.fromEntries(counts)]),
      ),
      keyRequests: key.requests,
      keyRequestsPeakPerSecond: key.peak,
    }),
  };
}
export type TokenStats = ReturnType<typeof tokenStats>;
