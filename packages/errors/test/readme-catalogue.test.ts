import fs from 'node:fs';
import path from 'node:path';
import { STATUS } from '../src/status.js';

/** The README's catalogue table is the documentation of every error a service answers. */
describe("the README's error catalogue", () => {
  const readme = fs.readFileSync(
    path.join(import.meta.dirname, '..', '..', '..', 'README.md'),
    'utf8',
  );
  const rows = [...readme.matchAll(/^\| (\d{3}) \| (ERR\d{5}) \| ([A-Z_]+) \| [^|]+\|$/gm)].map(
    ([, status, code, message]) => ({ status: Number(status), code, message }),
  );

  it('lists every row of the catalogue, in its order, with its status and message', () => {
    expect(rows).toEqual(
      Object.entries(STATUS).map(([code, row]) => ({
        status: row.statusCode,
        code,
        message: row.message,
      })),
    );
  });
});
