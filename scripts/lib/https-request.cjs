// @ts-check
// The one HTTPS request helper of the scripts and the tests: a single request on a fresh
// connection, trusting the development CA (certs/ca.crt, or $CERTS_DIR/ca.crt).
'use strict';
const fs = require('node:fs');
const https = require('node:https');
const path = require('node:path');

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {import('node:http').IncomingHttpHeaders} headers
 * @property {string} text the body as text
 * @property {unknown} body the body parsed as JSON, or undefined when it is not JSON
 */

/** @type {Buffer | undefined} */
let devCa;
const certsDir = () => process.env.CERTS_DIR ?? path.join(__dirname, '..', '..', 'certs');

/**
 * `servername`: the name the certificate must hold when the URL names the server by its
 * address (a container's, on a test's own network).
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string, timeoutMs?: number, servername?: string }} [options]
 * @returns {Promise<Answer>}
 */
function httpsRequest(
  url,
  { method = 'GET', headers = {}, body, timeoutMs = 10000, servername } = {},
) {
  devCa ??= fs.readFileSync(path.join(certsDir(), 'ca.crt'));
  const ca = devCa;
  const tls = servername ? { servername } : {};
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca, agent: false, ...tls }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        /** @type {unknown} */
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A client-credentials token from a light-oauth2 token endpoint (form POST, Basic auth).
 * @param {string} tokenUrl the server, e.g. https://localhost:6882
 * @param {string} clientId
 * @param {string} secret
 * @param {string} [scope] space-separated
 * @returns {Promise<string>}
 */
async function clientCredentialsToken(tokenUrl, clientId, secret, scope) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) form.set('scope', scope);
  const answer = await httpsRequest(`${tokenUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
    },
    body: form.toString(),
  });
  const token = /** @type {{ access_token?: unknown } | undefined} */ (answer.body)?.access_token;
  if (answer.status !== 200 || typeof token !== 'string') {
    throw new Error(`token request: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return token;
}

module.exports = { httpsRequest, clientCredentialsToken };
