import { IntervalStats } from '../src/interval-stats.js';
import { outcomeOf } from '../src/outcome.js';

describe('outcomeOf', () => {
  it.each([
    [101, undefined],
    [200, 'success'],
    [204, 'success'],
    [302, 'success'],
    [399, 'success'],
    [400, 'request_error'],
    [401, 'auth_error'],
    [403, 'auth_error'],
    [404, 'request_error'],
    [405, 'request_error'],
    [408, 'request_error'],
    [500, 'server_error'],
    [504, 'server_error'],
  ])('%i is %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });
});

/** The series of one 404 of 1 ms to an unknown path without a token. */
const UNKNOWN_404 = {
  endpoint: 'unknown',
  clientId: 'unknown',
  counts: { request: 1, success: 0, auth_error: 0, request_error: 1, server_error: 0 },
  responseTime: { count: 1, min: 1, max: 1, mean: 1 },
};

describe('IntervalStats', () => {
  it('counts per endpoint and client, then resets on drain', () => {
    const stats = new IntervalStats();
    stats.record('/v1/data@get', 'c1', 200, 4);
    stats.record('/v1/data@get', 'c1', 401, 2);
    stats.record('/v1/data@get', 'c1', 200, 9);
    stats.record('unknown', 'unknown', 404, 1);
    expect(stats.drain()).toEqual([
      {
        endpoint: '/v1/data@get',
        clientId: 'c1',
        counts: { request: 3, success: 2, auth_error: 1, request_error: 0, server_error: 0 },
        responseTime: { count: 3, min: 2, max: 9, mean: 5 },
      },
      UNKNOWN_404,
    ]);
    // Next interval: the series are still reported, from zero, without a timer.
    stats.record('unknown', 'unknown', 503, 3);
    expect(stats.drain()).toEqual([
      {
        endpoint: '/v1/data@get',
        clientId: 'c1',
        counts: { request: 0, success: 0, auth_error: 0, request_error: 0, server_error: 0 },
      },
      {
        endpoint: 'unknown',
        clientId: 'unknown',
        counts: { request: 1, success: 0, auth_error: 0, request_error: 0, server_error: 1 },
        responseTime: { count: 1, min: 3, max: 3, mean: 3 },
      },
    ]);
  });

  it('keeps one series per endpoint and client, in the order first seen, merged into by name', () => {
    const stats = new IntervalStats();
    stats.record('/a@get', 'c2', 200, 1);
    stats.record('/b@get', 'c1', 200, 1);
    stats.record('/a@get', 'c1', 500, 1);
    stats.record('/b@get', 'c1', 403, 1);
    stats.record('/a@get', 'c2', 200, 1);
    // Names that a key made by joining the two could confuse stay apart.
    stats.record('/a@get\u0000c1', '', 200, 1);
    stats.merge([
      {
        endpoint: '/a@get',
        clientId: 'c1',
        counts: { request: 2, success: 2, auth_error: 0, request_error: 0, server_error: 0 },
        responseTime: { count: 2, min: 5, max: 7, mean: 6 },
      },
    ]);
    const drained = stats.drain();
    expect(drained.map((s) => [s.endpoint, s.clientId, s.counts.request])).toEqual([
      ['/a@get', 'c2', 2],
      ['/b@get', 'c1', 2],
      ['/a@get', 'c1', 3],
      ['/a@get\u0000c1', '', 1],
    ]);
    expect(drained[1].counts).toMatchObject({ success: 1, auth_error: 1 });
    expect(drained[2].counts).toMatchObject({ success: 2, server_error: 1 });
    expect(drained[2].responseTime).toEqual({ count: 3, min: 1, max: 7, mean: 13 / 3 });
  });

  it('counts a 1xx as a request with no outcome', () => {
    const stats = new IntervalStats();
    stats.record('e', 'c', 101, 1);
    expect(stats.drain()[0].counts).toEqual({
      request: 1,
      success: 0,
      auth_error: 0,
      request_error: 0,
      server_error: 0,
    });
  });

  it('has nothing to drain before the first request', () => {
    expect(new IntervalStats().drain()).toEqual([]);
  });
});

describe('IntervalStats.merge: the workers of one service added up', () => {
  it('sums the counts, takes the min of the mins and the max of the maxes, weights the means', () => {
    const one = new IntervalStats();
    one.record('/v1/data@get', 'c1', 200, 2);
    one.record('/v1/data@get', 'c1', 200, 4);
    one.record('/v1/data@get', 'c1', 401, 6);
    const two = new IntervalStats();
    two.record('/v1/data@get', 'c1', 200, 12);
    two.record('unknown', 'unknown', 404, 1);
    const primary = new IntervalStats();
    primary.merge(one.drain());
    primary.merge(two.drain());
    expect(primary.drain()).toEqual([
      {
        endpoint: '/v1/data@get',
        clientId: 'c1',
        counts: { request: 4, success: 3, auth_error: 1, request_error: 0, server_error: 0 },
        responseTime: { count: 4, min: 2, max: 12, mean: 6 },
      },
      UNKNOWN_404,
    ]);
    // A series seen once is reported with zeros afterwards; an interval without requests adds none.
    primary.merge(one.drain());
    expect(primary.drain()).toEqual([
      expect.objectContaining({
        endpoint: '/v1/data@get',
        counts: expect.objectContaining({ request: 0 }),
      }),
      expect.objectContaining({
        endpoint: 'unknown',
        counts: expect.objectContaining({ request: 0 }),
      }),
    ]);
  });
});
