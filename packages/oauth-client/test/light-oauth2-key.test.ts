import { isNoSuchKid, keyServiceAnswer, type ClientCheck } from '../src/light-oauth2-key.js';

const options = (client: ClientCheck = { ok: true }, providerId?: string) => ({
  providerId,
  authenticate: vi.fn(() => client),
  certificate: (keyId: string) => (keyId === '100' ? 'PEM-100' : undefined),
});

const body = (answer: { body: string }) => JSON.parse(answer.body) as Record<string, unknown>;

describe("light-oauth2's key service answers (keyServiceAnswer)", () => {
  it('answers a known kid its PEM as application/text', () => {
    expect(keyServiceAnswer('100', 'Basic x', options())).toEqual({
      status: 200,
      contentType: 'application/text',
      body: 'PEM-100',
    });
  });

  it('answers an unknown kid of its own 400 ERR12030 INVALID_KEY_ID', () => {
    const answer = keyServiceAnswer('999', 'Basic x', options());
    expect(answer.status).toBe(400);
    expect(answer.contentType).toBe('application/json');
    expect(answer.body).toBe(
      '{"statusCode":400,"code":"ERR12030","message":"INVALID_KEY_ID","description":"Invalid key id 999.","severity":"ERROR"}',
    );
  });

  it('reads a kid of four characters or more as provider id + key id', () => {
    // another provider: 404 ERR12017, without asking for credentials
    const other = options();
    expect(body(keyServiceAnswer('made-up', undefined, other))).toEqual({
      statusCode: 404,
      code: 'ERR12017',
      message: 'KEY_NOT_FOUND',
      description: 'Public key certificate keyId made-up is not found.',
      severity: 'ERROR',
    });
    expect(other.authenticate).not.toHaveBeenCalled();
    // provider 00: its own keys, without credentials
    expect(keyServiceAnswer('00100', undefined, options()).body).toBe('PEM-100');
    // its own provider id: with credentials
    expect(keyServiceAnswer('01100', 'Basic x', options({ ok: true }, '01')).body).toBe('PEM-100');
    expect(body(keyServiceAnswer('01999', 'Basic x', options({ ok: true }, '01'))).code).toBe(
      'ERR12030',
    );
  });

  it.each([
    [{ ok: false, reason: 'missing' } as const, 401, 'ERR12002', 'MISSING_AUTHORIZATION_HEADER'],
    [{ ok: false, reason: 'wrong-secret' } as const, 401, 'ERR12007', 'UNAUTHORIZED_CLIENT'],
    [
      { ok: false, reason: 'unknown-client', clientId: 'nobody' } as const,
      404,
      'ERR12014',
      'CLIENT_NOT_FOUND',
    ],
  ])('refuses the client: %j', (client, status, code, message) => {
    const answer = keyServiceAnswer('100', 'Basic x', options(client));
    expect(answer.status).toBe(status);
    expect(body(answer)).toMatchObject({ statusCode: status, code, message });
  });
});

describe('isNoSuchKid', () => {
  it.each([
    [404, '', true],
    [404, '{"code":"ERR12017"}', true],
    [404, 'not json', true],
    [404, '{"code":"ERR12014"}', false],
    [400, '{"statusCode":400,"code":"ERR12030"}', true],
    [400, '{"code":"ERR11004"}', false],
    [400, 'not json', false],
    [400, 'null', false],
    [401, '{"code":"ERR12030"}', false],
    [500, '', false],
  ])('%s %j: %s', (status, answer, expected) => {
    expect(isNoSuchKid(status, answer)).toBe(expected);
  });
});
