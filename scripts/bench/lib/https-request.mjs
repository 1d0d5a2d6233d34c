// The systems' entry points checked before they are loaded (the one HTTPS helper: @chain/testkit).
import fs from 'node:fs';
import { httpsRequest } from '@chain/testkit';

/**
 * Checks that a chain entry point answers 200 with the expected messages before loading it,
 * presenting the client certificate `client` ({cert, key}: PEM file paths) when given.
 */
export async function expectMessages(url, headers, letters, client) {
  const expected = JSON.stringify(
    letters.flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]),
  );
  await expectAnswer(url, headers, expected, true, client);
}

/** Checks that `url` answers 200 with a body holding `expected` (or equal to it, `exact`). */
export async function expectAnswer(url, headers, expected, exact = false, client) {
  const answer = await httpsRequest(url, {
    headers,
    ...(client && {
      client: { cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) },
    }),
  });
  const ok = exact ? answer.text === expected : answer.text.includes(expected);
  if (answer.status !== 200 || !ok) {
    throw new Error(`${url}: expected 200 with ${expected}, got ${answer.status} ${answer.text}`);
  }
}
