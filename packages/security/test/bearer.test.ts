import { extractBearer, parseBearer } from '../src/bearer';
import { StatusError } from '../src/status-error';

describe('parseBearer', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER   abc  ', 'abc'],
  ])('reads %j', (header, token) => {
    expect(parseBearer(header)).toBe(token);
  });
  it.each([
    [undefined],
    [['Bearer a', 'Bearer b']],
    [''],
    ['Bearer'],
    ['Basic abc'],
    ['Bearer a b'],
  ])('refuses %j', (header) => {
    expect(parseBearer(header)).toBeUndefined();
  });
});

describe('extractBearer', () => {
  it('returns the token', () => {
    expect(extractBearer('Bearer t')).toBe('t');
  });
  it('throws ERR10002 without one', () => {
    expect(() => extractBearer('Basic x')).toThrow(StatusError);
    try {
      extractBearer(undefined);
    } catch (err) {
      expect((err as StatusError).code).toBe('ERR10002');
    }
  });
});
