import { auditRecord } from '../src/audit-log';

const auth = { clientId: 'c', userId: undefined, scopes: ['a', 'b'], claims: {}, passThrough: {} };

describe('auditRecord', () => {
  it('holds both parts when both switches are on', () => {
    expect(auditRecord({ logJwtToken: true, logClientUserScope: true }, 't.o.k', auth)).toEqual({
      jwt: 't.o.k',
      client_id: 'c',
      user_id: undefined,
      scope: 'a b',
    });
  });
  it('is undefined when both are off', () => {
    expect(
      auditRecord({ logJwtToken: false, logClientUserScope: false }, 't', auth),
    ).toBeUndefined();
  });
});
