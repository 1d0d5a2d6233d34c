import type { StatusError } from '@chain/errors';
import { createHash } from 'node:crypto';
import { EmbeddedJWK, jwtVerify } from 'jose';
import {
  Downstream,
  TransportError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from '@chain/http';
import {
  DownstreamCaller,
  DpopKey,
  TokenFetchError,
  TokenSource,
  type ClientEvents,
} from '../src/index.js';
import type { RenewalTrigger } from '../src/client-events.js';
import { RenewableToken } from '../src/renewable-token.js';

/** A downstream that answers from a script (an answer or a failure) and keeps what it was sent. */
function downstreamOf(...script: (TransportResponse | TransportError)[]) {
  const sent: TransportRequest[] = [];
  const transport: Transport = {
    request: async (r) => {
      sent.push(r);
      const next = script.shift();
      if (!next) throw new Error('no more answers scripted');
      if (next instanceof TransportError) throw next;
      return next;
    },
  };
  return {
    sent,
    downstream: new Downstream({
      name: 'api-b',
      url: 'https://api-b:7442',
      timeoutMs: 500,
      transport,
    }),
  };
}

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: JSON.stringify(body),
});
const OK = answer(200, ['API B: Message 1']);

/**
 * The own token: `own-1`, `own-2`, … from a token server that counts what made it ask; bound to
 * `dpop` when given.
 */
function ownTokens(fail?: (n: number) => boolean, dpop?: DpopKey) {
  const triggers: RenewalTrigger[] = [];
  const seen: string[] = [];
  const events: ClientEvents = {
    downstreamRetried: ({ downstream, reason }) => seen.push(`${downstream} ${reason}`),
    tokenRenewed: ({ trigger }) => seen.push(`renewed ${trigger}`),
  };
  const token = new RenewableToken({
    clientId: 'api-a-client',
    tokenRenewBeforeExpired: 1000,
    expiredRefreshRetryDelay: 2000,
    earlyRefreshRetryDelay: 4000,
    events,
    fetch: async (trigger) => {
      triggers.push(trigger);
      if (fail?.(triggers.length)) {
        throw new TokenFetchError('unreachable', { clientId: 'api-a-client' });
      }
      return { value: `own-${triggers.length}`, expiresAt: Date.now() + 600_000 };
    },
  });
  return { source: new TokenSource(token, dpop), triggers, seen, events };
}

const caller = (downstream: Downstream, own: ReturnType<typeof ownTokens>) =>
  new DownstreamCaller({
    downstream,
    tokens: own.source,
    events: own.events,
  });

const headersOf = (r: TransportRequest) => ({
  authorization: r.headers.Authorization,
  scopeToken: r.headers['X-Scope-Token'],
});

describe('DownstreamCaller: the retry with a renewed token', () => {
  it('our X-Scope-Token refused (401 ERR10003): one more call with a new token; the caller never sees it', async () => {
    const { sent, downstream } = downstreamOf(answer(401, { code: 'ERR10003' }), OK);
    const own = ownTokens();
    await expect(
      caller(downstream, own).getJson({
        callerAuthorization: 'Bearer user',
        headers: { 'X-Correlation-Id': 'c-1' },
      }),
    ).resolves.toEqual({ status: 200, body: ['API B: Message 1'] });
    expect(sent.map(headersOf)).toEqual([
      { authorization: 'Bearer user', scopeToken: 'Bearer own-1' },
      { authorization: 'Bearer user', scopeToken: 'Bearer own-2' },
    ]);
    expect(sent[1].headers['X-Correlation-Id']).toBe('c-1');
    expect(own.triggers).toEqual(['cold', 'invalid_token']);
    expect(own.seen).toEqual(['renewed cold', 'api-b invalid_token', 'renewed invalid_token']);
  });

  it("our token in Authorization: 401 ERR10001, or any server's RFC 6750 invalid_token challenge, is retried", async () => {
    for (const refusal of [
      answer(401, { code: 'ERR10001' }),
      answer(401, 'unauthorized', {
        'www-authenticate': 'Bearer realm="x", error="invalid_token", error_description="revoked"',
      }),
    ]) {
      const { sent, downstream } = downstreamOf(refusal, OK);
      const own = ownTokens();
      await expect(caller(downstream, own).getJson()).resolves.toMatchObject({ status: 200 });
      expect(sent.map(headersOf)).toEqual([
        { authorization: 'Bearer own-1', scopeToken: undefined },
        { authorization: 'Bearer own-2', scopeToken: undefined },
      ]);
    }
  });

  it("the caller's token refused, a 403, a second refusal: no (more) retry, the catalogue error", async () => {
    const cases: [TransportResponse[], string, number][] = [
      // Our token is the scope token: a refused Authorization is the caller's.
      [
        [answer(401, { code: 'ERR10000' })],
        'Downstream service api-b answered HTTP 401 ERR10000',
        1,
      ],
      [
        [answer(403, { code: 'ERR10006' })],
        'Downstream service api-b answered HTTP 403 ERR10006',
        1,
      ],
      // A bare 401 without the invalid_token challenge is not about our token either.
      [[answer(401, 'no')], 'Downstream service api-b answered HTTP 401', 1],
      [
        [answer(401, { code: 'ERR10004' }), answer(401, { code: 'ERR10004' })],
        'Downstream service api-b answered HTTP 401 ERR10004',
        2,
      ],
    ];
    for (const [script, description, calls] of cases) {
      const { sent, downstream } = downstreamOf(...script);
      const err = (await caller(downstream, ownTokens())
        .getJson({ callerAuthorization: 'Bearer user' })
        .catch((e: unknown) => e)) as StatusError;
      expect(err.body).toEqual({
        statusCode: 502,
        code: 'ERR20004',
        message: 'DOWNSTREAM_BAD_RESPONSE',
        description,
      });
      expect(sent).toHaveLength(calls);
    }
  });

  it('calls refused at once share one renewal: one token request for the lot', async () => {
    const refusals = Array.from({ length: 5 }, () => answer(401, { code: 'ERR10003' }));
    const { sent, downstream } = downstreamOf(...refusals, OK, OK, OK, OK, OK);
    const own = ownTokens();
    await own.source.get(); // own-1 at hand
    const c = caller(downstream, own);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => c.getJson({ callerAuthorization: 'Bearer user' })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(own.triggers).toEqual(['cold', 'invalid_token']);
    expect(sent.slice(5).map((r) => r.headers['X-Scope-Token'])).toEqual(
      Array(5).fill('Bearer own-2'),
    );
  });

  it('no new token to be had after the refusal: ERR10009, keeping the cause', async () => {
    const { downstream } = downstreamOf(answer(401, { code: 'ERR10003' }));
    const own = ownTokens((n) => n === 2);
    const err = (await caller(downstream, own)
      .getJson({ callerAuthorization: 'Bearer user' })
      .catch((e: unknown) => e)) as StatusError;
    expect(err.code).toBe('ERR10009');
    expect(err.cause).toBeInstanceOf(TokenFetchError);
  });

  it('without a token source (security off): the headers as given, no credentials', async () => {
    const { sent, downstream } = downstreamOf(OK);
    const plain = new DownstreamCaller({ downstream });

    await plain.getJson({
      headers: { 'X-Correlation-Id': 'c' },
      callerAuthorization: 'Bearer x',
      path: '/v1/data',
    });
    expect(sent[0].headers).toEqual({ Accept: 'application/json', 'X-Correlation-Id': 'c' });
    expect(sent[0].url.href).toBe('https://api-b:7442/v1/data');
  });
});

describe('DownstreamCaller: a DPoP-bound own token (RFC 9449)', () => {
  const proofOf = async (r: TransportRequest, header: string) =>
    (await jwtVerify(r.headers[header], EmbeddedJWK, { typ: 'dpop+jwt' })).payload;
  const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
  /** Two calls were sent, each with `Authorization: DPoP own-1`: their proofs. */
  const twoCallsWithOwnToken = (sent: TransportRequest[]) => {
    expect(sent.map(headersOf)).toEqual([
      { authorization: 'DPoP own-1', scopeToken: undefined },
      { authorization: 'DPoP own-1', scopeToken: undefined },
    ]);
    return Promise.all(sent.map((r) => proofOf(r, 'DPoP')));
  };

  it('alone: Authorization: DPoP <token> and a DPoP proof of this call (htm, htu, ath), a new one per call', async () => {
    const { sent, downstream } = downstreamOf(OK, OK);
    const key = new DpopKey();
    const c = caller(downstream, ownTokens(undefined, key));
    await c.getJson({ path: '/v1/data?x=1' });
    await c.getJson({ path: '/v1/data?x=1' });
    const [first, second] = await twoCallsWithOwnToken(sent);
    expect(first).toEqual({
      htm: 'GET',
      htu: 'https://api-b:7442/v1/data',
      iat: expect.any(Number),
      jti: expect.any(String),
      ath: ath('own-1'),
    });
    expect(Math.abs((first.iat as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(second.jti).not.toBe(first.jti);
  });

  it('beside the caller’s Authorization: X-Scope-Token: DPoP <token> and its proof in X-Scope-Token-DPoP', async () => {
    const { sent, downstream } = downstreamOf(OK);
    await caller(downstream, ownTokens(undefined, new DpopKey())).getJson({
      callerAuthorization: 'Bearer user',
      path: '/v1/data',
    });
    expect(sent.map(headersOf)).toEqual([
      { authorization: 'Bearer user', scopeToken: 'DPoP own-1' },
    ]);
    expect(sent[0].headers.DPoP).toBeUndefined();
    expect(await proofOf(sent[0], 'X-Scope-Token-DPoP')).toMatchObject({
      htm: 'GET',
      htu: 'https://api-b:7442/v1/data',
      ath: ath('own-1'),
    });
  });

  it('a replayed proof (401 ERR20014): one more call, the same token, a new proof; no renewal', async () => {
    const { sent, downstream } = downstreamOf(answer(401, { code: 'ERR20014' }), OK);
    const own = ownTokens(undefined, new DpopKey());
    await expect(caller(downstream, own).getJson()).resolves.toMatchObject({ status: 200 });
    const [first, second] = await twoCallsWithOwnToken(sent);
    expect(second.jti).not.toBe(first.jti);
    expect(own.triggers).toEqual(['cold']);
    expect(own.seen).toEqual(['renewed cold', 'api-b dpop_proof_replayed']);
  });

  it.each([
    ['a binding mismatch (ERR20012)', answer(401, { code: 'ERR20012' }), 'HTTP 401 ERR20012'],
    ['an invalid proof (ERR20013)', answer(401, { code: 'ERR20013' }), 'HTTP 401 ERR20013'],
    [
      "any server's DPoP challenge naming the proof",
      answer(401, 'no', {
        'www-authenticate': 'DPoP algs="ES256", error="invalid_dpop_proof", error_description="x"',
      }),
      'HTTP 401',
    ],
    ['a replayed proof, twice', answer(401, { code: 'ERR20014' }), 'HTTP 401 ERR20014'],
  ])('%s: the error, and never a renewal', async (_what, refusal, what) => {
    const { sent, downstream } = downstreamOf(refusal, refusal);
    const own = ownTokens(undefined, new DpopKey());
    const err = (await caller(downstream, own)
      .getJson()
      .catch((e: unknown) => e)) as StatusError;
    expect(err.body).toEqual({
      statusCode: 502,
      code: 'ERR20004',
      message: 'DOWNSTREAM_BAD_RESPONSE',
      description: `Downstream service api-b answered ${what}`,
    });
    expect(own.triggers).toEqual(['cold']);
    const replayed = (refusal.body as string).includes('ERR20014');
    expect(sent).toHaveLength(replayed ? 2 : 1);
  });

  it('a binding refusal of a Bearer own token (certificate-bound): no renewal either; ERR20014 without a key is not ours', async () => {
    for (const code of ['ERR20012', 'ERR20013', 'ERR20014']) {
      const { sent, downstream } = downstreamOf(answer(401, { code }), OK);
      const own = ownTokens();
      await expect(caller(downstream, own).getJson()).rejects.toMatchObject({ code: 'ERR20004' });
      expect([code, sent.length, own.triggers]).toEqual([code, 1, ['cold']]);
    }
  });

  it('a call resent on a fresh connection (a kept-alive one found reset) carries a new proof', async () => {
    const { sent, downstream } = downstreamOf(
      new TransportError('stale_connection', 'kept-alive connection reset'),
      OK,
    );
    const own = ownTokens(undefined, new DpopKey());
    await expect(caller(downstream, own).getJson({ path: '/v1/data' })).resolves.toMatchObject({
      status: 200,
    });
    expect(sent.map((r) => [r.headers.Authorization, r.freshConnection ?? false])).toEqual([
      ['DPoP own-1', false],
      ['DPoP own-1', true],
    ]);
    const [first, second] = await Promise.all(sent.map((r) => proofOf(r, 'DPoP')));
    expect(second.jti).not.toBe(first.jti);
    expect(second.htu).toBe('https://api-b:7442/v1/data');
  });

  it('a Bearer own token is resent as it was', async () => {
    const { sent, downstream } = downstreamOf(
      new TransportError('stale_connection', 'kept-alive connection reset'),
      OK,
    );
    await caller(downstream, ownTokens()).getJson();
    expect(sent[1].headers).toEqual(sent[0].headers);
  });

  it('a DPoP challenge with invalid_token still renews the token', async () => {
    const { sent, downstream } = downstreamOf(
      answer(401, 'no', { 'www-authenticate': 'DPoP algs="ES256", error="invalid_token"' }),
      OK,
    );
    const own = ownTokens(undefined, new DpopKey());
    await expect(caller(downstream, own).getJson()).resolves.toMatchObject({ status: 200 });
    expect(sent.map(headersOf).map((h) => h.authorization)).toEqual(['DPoP own-1', 'DPoP own-2']);
    expect(own.triggers).toEqual(['cold', 'invalid_token']);
  });
});
