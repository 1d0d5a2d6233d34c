// The systems' entry points checked before they are loaded (the one HTTPS helper: @chain/testkit).
import { httpsRequest } from '@chain/testkit';

/** Checks that a chain entry point answers 200 with the expected messages before loading it. */
export async function expectMessages(url, headers, letters) {
  const expected = JSON.stringify(
    letters.flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]),
  );
  await expectAnswer(url, headers, expected, true);
}

/** Checks that `url` answers 200 with a body holding `expected` (or equal to it, `exact`). */
export async function expectAnswer(url, headers, expected, exact = false) {
  const answer = await httpsRequest(url, { headers });
  const ok = exact ? answer.text === expected : answer.text.includes(expected);
  if (answer.status !== 200 || !ok) {
    throw new Error(`${url}: expected 200 with ${expected}, got ${answer.status} ${answer.text}`);
  }
}
