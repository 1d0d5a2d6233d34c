import { mockTokenResponse, type MockTokenIssuer } from '@chain/security';
import type { Stage } from '../exchange.js';
import { readBody, sendJson } from '../respond.js';

const MAX_FORM_BYTES = 4096;

/** security.yml `enableMockJwt`: `POST /oauth2/token` answers a token the service accepts. */
export function mockTokenStage(issuer: MockTokenIssuer): Stage {
  return async (x) => {
    if (x.method !== 'POST' || x.path !== '/oauth2/token') return;
    const body = await readBody(x.req, MAX_FORM_BYTES);
    const isForm = /^application\/x-www-form-urlencoded\b/i.test(
      x.req.headers['content-type'] ?? '',
    );
    const form = new URLSearchParams(isForm ? body.toString('utf8') : '');
    x.res.setHeader('Cache-Control', 'no-store');
    sendJson(x.res, 200, await mockTokenResponse(issuer, form, x.req.headers.authorization));
  };
}
