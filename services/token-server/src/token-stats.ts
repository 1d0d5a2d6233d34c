/**
 * What a test (or an operator) reads at `GET /stats`: token requests per client as they reach
 * the token endpoint (refused ones included), and the tokens issued per client.
 */
export class TokenStats {
  private readonly requests = new Map<string, number>();
  private readonly issued = new Map<string, number>();

  request(clientId: string): void {
    this.requests.set(clientId, (this.requests.get(clientId) ?? 0) + 1);
  }

  issue(clientId: string): void {
    this.issued.set(clientId, (this.issued.get(clientId) ?? 0) + 1);
  }

  snapshot(): { tokenRequests: Record<string, number>; tokensIssued: Record<string, number> } {
    return {
      tokenRequests: Object.fromEntries(this.requests),
      tokensIssued: Object.fromEntries(this.issued),
    };
  }
}
