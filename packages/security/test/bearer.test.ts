import { parseCredentials } from '../src/bearer.js';

const parseBearer = (header: string | string[] | undefined) => {
  const found = parseCredentials(header);
  return found?.scheme === 'bearer' ? found.token : undefined;
};
const parseDpop = (header: string | string[] | undefined) => {
  const found = parseCredentials(header);
  return found?.scheme === 'dpop' ? found.token : undefined;
};

describe('parseCredentials: Bearer', () => {
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

describe('parseCredentials: DPoP (RFC 9449 section 7.1)', () => {
  it.each([
    ['DPoP abc', 'abc'],
    ['dpop abc', 'abc'],
    ['DPOP   abc  ', 'abc'],
    ['\tDPoP abc', 'abc'],
  ])('reads %j', (header, token) => {
    expect(parseDpop(header)).toBe(token);
  });
  it.each([
    [undefined],
    [['DPoP a', 'DPoP b']],
    [''],
    ['DPoP'],
    ['Bearer abc'],
    ['DPoP a b'],
    ['DPoPabc'],
  ])('refuses %j', (header) => {
    expect(parseDpop(header)).toBeUndefined();
  });
});

describe('parseCredentials reads every header as the general rule does', () => {
  // The rule, written plainly: the trimmed header split at white space is `bearer` or `dpop` (any
  // case) and one non-empty token. parseCredentials reads the usual header without the split.
  const rule = (header: string) => {
    const parts = header.trim().split(/\s+/);
    const scheme = parts[0].toLowerCase();
    return parts.length === 2 && (scheme === 'bearer' || scheme === 'dpop') && parts[1] !== ''
      ? { scheme, token: parts[1] }
      : undefined;
  };
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl-_~+/=';

  it.each([
    [`Bearer ${token}`],
    [`bEaReR ${token}`],
    [`Bearer  ${token}`],
    [`Bearer\t${token}`],
    [` Bearer ${token}`],
    [`Bearer ${token} `],
    [`Bearer ${token}\u00a0`],
    [`Bearer\u00a0${token}`],
    [`Bearer ${token}\u00a0x`],
    [`Bearer ${token} x`],
    [`Bearer ${token}\u00e9`],
    [`Bearer ${token}\u2028`],
    [`Bearer ${token}\ufeff`],
    [`Bearer ${token}\x7f`],
    [`Bearer ${token}\x00`],
    ['Bearer '],
    ['Bearer  '],
    ['Bearerx abc'],
    ['Bearer x'],
    ['Bearer "quoted"'],
    ['Beare abc'],
    [`DPoP ${token}`],
    [`dPoP\t${token} `],
    [`DPoP ${token} x`],
    ['DPoPx abc'],
  ])('%j', (header) => {
    expect(parseCredentials(header)).toEqual(rule(header));
  });

  it('agrees on 20,000 headers made of the characters that matter', () => {
    const pieces = [
      'Bearer',
      'bearer',
      'BEARER',
      'DPoP',
      'dpop',
      ' ',
      '  ',
      '\t',
      '\u00a0',
      'a',
      'Z',
      '.',
      '-',
      '~',
      '\u00e9',
      '\x7f',
      '\n',
      token,
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length;
    for (let i = 0; i < 20000; i++) {
      let header = i % 2 === 0 ? 'Bearer ' : '';
      for (let n = next() % 5; n >= 0; n--) header += pieces[next()];
      expect([header, parseCredentials(header)]).toEqual([header, rule(header)]);
    }
  });
});
