/** By endpoint, then by client: a request builds no key string. `all`: in the order first seen. */
export class SeriesTable<T> {
  private readonly byEndpoint = new Map<string, Map<string, T>>();
  readonly all: T[] = [];

  constructor(private readonly make: (endpoint: string, clientId: string) => T) {}

  get(endpoint: string, clientId: string): T {
    let byClient = this.byEndpoint.get(endpoint);
    if (!byClient) this.byEndpoint.set(endpoint, (byClient = new Map()));
    const found = byClient.get(clientId);
    if (found) return found;
    const entry = this.make(endpoint, clientId);
    byClient.set(clientId, entry);
    this.all.push(entry);
    return entry;
  }

  clear(): void {
    this.byEndpoint.clear();
    this.all.length = 0;
  }
}
