// The chain's entry point checked before it is loaded (the one HTTPS helper: scripts/lib).
import { httpsRequest } from '../../lib/https-request.cjs';

/** Checks that a chain entry point answers 200 with the expected messages before loading it. */
export async function expectMessages(url, headers, letters) {
  const answer = await httpsRequest(url, { headers });
  const expected = JSON.stringify(
    letters.flatMap((l) => [`API ${l}: Message 1`, `API ${l}: Message 2`]),
  );
  if (answer.status !== 200 || answer.text !== expected) {
    throw new Error(`${url}: expected 200 ${expected}, got ${answer.status} ${answer.text}`);
  }
}
