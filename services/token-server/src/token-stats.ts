/**
 * What a test (or an operator) reads at `GET /stats`: token requests per client as they reach
 * the token endpoint (refused ones included), the tokens issued per client, and the requests of
 * the key endpoints: in all, and the most seen within one second.
 */
export class TokenStats {
  private readonly requests = new Map<string, number>();
  private readonly issued = new Map<string, number>();
  private keyRequests = 0;
  private keySecond = -1;
  private keyInSecond = 0;
  private keyPeak = 0;

  constructor(private readonly now: () => number = Date.now) {}

  request(clientId: string): void {
    this.requests.set(clientId, (this.requests.get(clientId) ?? 0) + 1);
  }

  issue(clientId: string): void {
    this.issued.set(clientId, (this.issued.get(clientId) ?? 0) + 1);
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
    keyRequests: number;
    keyRequestsPeakPerSecond: number;
  } {
    return {
      tokenRequests: Object.fromEntries(this.requests),
      tokensIssued: Object.fromEntries(this.issued),
      keyRequests: this.keyRequests,
      keyRequestsPeakPerSecond: this.keyPeak,
    };
  }
}
