import { ConfigLoader, z } from '@chain/config';

export type ChainLetter = 'A' | 'B' | 'C' | 'D';

const NEXT: Record<ChainLetter, ChainLetter | undefined> = { A: 'B', B: 'C', C: 'D', D: undefined };

/** From `api_<x>.yml` (`api_<y>_host`, `api_<y>_path`); api-d has none. */
export function loadDownstreamConfig(loader: ConfigLoader, letter: ChainLetter) {
  const next = NEXT[letter];
  if (!next) return undefined;
  const x = letter.toLowerCase();
  const y = next.toLowerCase();
  const hostKey = `api_${y}_host`;
  const pathKey = `api_${y}_path`;
  const file = loader.load(
    `api_${x}`,
    () =>
      z.strictObject({
        [hostKey]: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')),
        [pathKey]: z.string().startsWith('/'),
      }),
    { required: true },
  ) as Record<string, string>;
  return { name: `api-${y}`, host: file[hostKey], path: file[pathKey] };
}
