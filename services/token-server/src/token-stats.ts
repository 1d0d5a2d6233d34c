/**
 * What a test (or an operator) reads at `GET /stats`: token requests per client as they reach
 * the token endpoint (refused ones included), the tokens issued per client, the code endpoint's
 * requests and codes issued per client, the introspections per client that asked, and the
 * requests of the key endpoints: in all, and the most seen within one second.
 */
export class TokenStats {
  private readonly requests = new Map<string, number>();
  private readonly issued = new Map<string, number>();
  private readonly codeRequests = new Map<string, number>();
  private readonly codesIssued = new Map<string, number>();
  private readonly introspections = new Map<string, number>();
  private keyRequests = 0;
  private keySecond = -1;
  private keyInSecond = 0;
  private keyPeak = 0;

  constructor(private readonly now: () => number = Date.now) {}

  request(clientId: string): void {
    add(this.requests, clientId);
  }

  issue(clientId: string): void {
    add(this.issued, clientId);
  }

  /** A request of the code endpoint, by the client it named (`unknown` when none was known). */
  code(clientId: string, issued: boolean): void {
    add(this.codeRequests, clientId);
    if (issued) add(this.codesIssued, clientId);
  }

  /** An introspection, by the client that asked (`unknown` when it did not authenticate). */
  introspection(clientId: string): void {
    add(this.introspections, clientId);
  }

  keyRequest(): void {
    this.keyRequests += 1;
    const second = Math.floor(this.now() / 1000);
    if (second !== this.keySecond) {
      this.keySecond = second;
      this.keyInSecond = 0;
    }
    this.keyInSecond += 1;
    this.keyPeak = Math.max(this.keyPeak, this.keyInSecond);
  }

  snapshot(): {
    tokenRequests: Record<string, number>;
    tokensIssued: Record<string, number>;
    codeRequests: Record<string, number>;
    codesIssued: Record<string, number>;
    introspectionRequests: Record<string, number>;
    keyRequests: number;
    keyRequestsPeakPerSecond: number;
  } {
    return {
      tokenRequests: Object.fromEntries(this.requests),
      tokensIssued: Object.fromEntries(this.issued),
      codeRequests: Object.fromEntries(this.codeRequests),
      codesIssued: Object.fromEntries(this.codesIssued),
      introspectionRequests: Object.fromEntries(this.introspections),
      keyRequests: this.keyRequests,
      keyRequestsPeakPerSecond: this.keyPeak,
    };
  }
}

function add(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
