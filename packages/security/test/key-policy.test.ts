import { StatusError } from '@chain/errors';
import { answerWithin, keyUnavailable } from '../src/key-policy.js';
import { KeyStore } from '../src/key-store.js';
import { TokenError } from '../src/token-error.js';

describe('key policy helpers', () => {
  it('an unknown kid is an invalid token; a key server that cannot answer is ERR20005 with its cause', async () => {
    await expect(new KeyStore(new Map(), { now: Date.now }).resolve('x')).rejects.toEqual(
      new TokenError('invalid', 'unknown kid'),
    );
    const cause = new Error('down');
    const err = keyUnavailable('200', cause);
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject({ code: 'ERR20005', cause });
  });

  it('answerWithin passes an answer or a failure on, and rejects past its time', async () => {
    await expect(answerWithin(Promise.resolve('pem'), 1000)).resolves.toBe('pem');
    await expect(answerWithin(Promise.reject(new Error('no')), 1000)).rejects.toThrow('no');
    await expect(answerWithin(new Promise(() => undefined), 20)).rejects.toThrow(
      'no answer within 20 ms',
    );
  });
});
