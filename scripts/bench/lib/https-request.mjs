// One HTTPS request trusting the dev CA (no keep-alive): status, headers and body text.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { CERTS } from './paths.mjs';

let ca;

export function request(url, { method = 'GET', headers = {}, body, timeoutMs = 10000 } = {}) {
  ca ??= fs.readFileSync(path.join(CERTS, 'ca.crt'));
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Checks that a chain entry point answers 200 with the expected messages before loading it. */
export async function expectMessages(url, headers, letters) {
  const answer = await request(url, { headers });
  const expected = JSON.stringify(
    letters.flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]),
  );
  if (answer.status !== 200 || answer.text !== expected) {
    throw new Error(`${url}: expected 200 ${expected}, got ${answer.status} ${answer.text}`);
  }
}
