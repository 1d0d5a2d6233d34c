import {
  newSpanId,
  newTraceId,
  parseTraceparent,
  parseTracestate,
  readTrace,
} from '../src/correlation.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('W3C Trace Context: traceparent', () => {
  it("a valid one gives the caller's trace-id, its span as parent and the sampled flag", () => {
    const trace = readTrace({ traceparent: `00-${TRACE}-${PARENT}-01` });
    expect(trace.traceId).toBe(TRACE);
    expect(trace.parentSpanId).toBe(PARENT);
    expect(trace.sampled).toBe(true);
    expect(readTrace({ traceparent: `00-${TRACE}-${PARENT}-00` }).sampled).toBe(false);
    // Other flag bits are not the sampled bit.
    expect(readTrace({ traceparent: `00-${TRACE}-${PARENT}-02` }).sampled).toBe(false);
    expect(readTrace({ traceparent: `00-${TRACE}-${PARENT}-03` }).sampled).toBe(true);
  });

  it('a later version is read by its first four fields; version ff and version 00 with more are not', () => {
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01-what-the-future-holds`)).toEqual({
      traceId: TRACE,
      parentId: PARENT,
      sampled: true,
    });
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01`)).toBeDefined();
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01x`)).toBeUndefined();
    expect(parseTraceparent(`ff-${TRACE}-${PARENT}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01-extra`)).toBeUndefined();
  });

  it.each([
    ['all-zero trace-id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['all-zero parent-id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['a short trace-id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['a short parent-id', `00-${TRACE}-${PARENT.slice(1)}-01`],
    ['no flags', `00-${TRACE}-${PARENT}`],
    ['other separators', `00_${TRACE}_${PARENT}_01`],
    ['two headers joined', `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`],
    ['empty', ''],
  ])('%s: a new trace starts here, and tracestate is ignored', (_what, header) => {
    const trace = readTrace({ traceparent: header, tracestate: 'vendor=x' });
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(trace.traceId).not.toBe(TRACE);
    expect(trace.parentSpanId).toBeUndefined();
    expect(trace.sampled).toBe(false);
    expect(trace.tracestate).toBeUndefined();
  });

  it('version 00 is read as the general expression reads it, whatever its characters', () => {
    // The rule, written plainly (3.2): parseTraceparent reads the usual form without it.
    const rule = (header: string) => {
      const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(
        header.trim(),
      );
      if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return undefined;
      if (/^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
      return { traceId: m[2], parentId: m[3], sampled: (parseInt(m[4], 16) & 1) === 1 };
    };
    const valid = `00-${TRACE}-${PARENT}-01`;
    const swaps = ['0', '9', 'a', 'f', 'g', 'A', 'F', '-', ' ', '_', 'x', '/', ':', '`', '@', 'G'];
    let checked = 0;
    for (let at = 0; at < valid.length; at++) {
      for (const c of swaps) {
        const header = valid.slice(0, at) + c + valid.slice(at + 1);
        expect([header, parseTraceparent(header)]).toEqual([header, rule(header)]);
        checked++;
      }
    }
    for (const flags of ['00', '01', '02', '03', 'ff', 'fe', '0f', 'f0']) {
      const header = `00-${TRACE}-${PARENT}-${flags}`;
      expect(parseTraceparent(header)).toEqual(rule(header));
    }
    for (const header of [
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      ` ${valid}`.slice(0, 55),
      `${valid} `,
      ` ${valid}`,
      `01-${TRACE}-${PARENT}-01`,
      `0a-${TRACE}-${PARENT}-01`,
    ]) {
      expect([header, parseTraceparent(header)]).toEqual([header, rule(header)]);
    }
    expect(checked).toBe(55 * swaps.length);
    expect(parseTraceparent(valid)).toEqual({ traceId: TRACE, parentId: PARENT, sampled: true });
  });

  it('absent: a new trace-id, not sampled (the tracing stage samples when it exports)', () => {
    const a = readTrace({});
    const b = readTrace({});
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.traceId).not.toBe(b.traceId);
    expect(a.sampled).toBe(false);
  });
});

describe('W3C Trace Context: tracestate', () => {
  it('valid members are kept in order, joined; several headers are one list', () => {
    expect(parseTracestate('rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    expect(parseTracestate(['a=1', 'tenant@vendor=2'])).toBe('a=1,tenant@vendor=2');
    expect(parseTracestate(' a=1 ,, b=2 ')).toBe('a=1,b=2');
  });

  it.each([
    ['a bad key', 'A=1'],
    ['a key twice', 'a=1,a=2'],
    ['a value with =', 'a=b=c'],
    ['a member without =', 'a=1,b'],
    ['an empty value', 'a='],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['control characters', 'a=\u0001'],
    ['empty', ''],
    ['over 8 KB', `a=${'x'.repeat(9000)}`],
  ])('%s: dropped whole', (_what, header) => {
    expect(parseTracestate(header)).toBeUndefined();
  });

  it('32 members pass', () => {
    const header = Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(',');
    expect(parseTracestate(header)).toBe(header);
  });
});

describe('Trace: the spans of this service', () => {
  it('its span id is made once, when first asked; each child is a new span of the same trace', () => {
    const trace = readTrace({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'a=1' });
    const span = trace.spanId;
    expect(span).toMatch(/^[0-9a-f]{16}$/);
    expect(trace.spanId).toBe(span);
    const one: Record<string, string> = {};
    const oneId = trace.addChild(one);
    const twoId = trace.addChild({});
    expect(oneId).not.toBe(twoId);
    expect(one).toEqual({ traceparent: `00-${TRACE}-${oneId}-01`, tracestate: 'a=1' });
    expect(trace.childHeaders().traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    const unsampled = readTrace({});
    expect(unsampled.childHeaders()).toEqual({
      traceparent: expect.stringMatching(new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`)),
    });
  });

  it('ids: 32 and 16 lower-case hex digits, 10,000 of each distinct (the pool refills)', () => {
    const traces = new Set(Array.from({ length: 10_000 }, newTraceId));
    const spans = new Set(Array.from({ length: 10_000 }, newSpanId));
    expect(traces.size).toBe(10_000);
    expect(spans.size).toBe(10_000);
    for (const id of [...traces].slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of [...spans].slice(0, 100)) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('correlation and traceability ids as before: kept when sane, else generated / absent', () => {
    const trace = readTrace({ 'x-correlation-id': 'c-1', 'x-traceability-id': 't-1' });
    expect(trace.correlationId).toBe('c-1');
    expect(trace.traceabilityId).toBe('t-1');
    const unsafe = readTrace({ 'x-correlation-id': 'a b', 'x-traceability-id': '<x>' });
    expect(unsafe.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(unsafe.traceabilityId).toBeUndefined();
  });
});
