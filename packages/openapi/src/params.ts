import { StatusError } from '@chain/errors';
import type { PathParam } from './spec.js';

export type ParamValue = string | number | boolean;

const TYPES: Record<
  PathParam['type'],
  [form: RegExp, what: string, read: (v: string) => ParamValue]
> = {
  integer: [/^-?\d{1,15}$/, 'an integer', Number],
  number: [/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'a number', Number],
  boolean: [/^(true|false)$/, 'a boolean', (v) => v === 'true'],
  string: [/^/, 'text', (v) => v],
};

export function coerceParams(
  params: readonly PathParam[],
  raw: Readonly<Record<string, string>>,
): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  for (const { name, type } of params) {
    let value: string;
    try {
      value = decodeURIComponent(raw[name] ?? '');
    } catch {
      throw new StatusError('ERR11004', [`path parameter ${name} is not valid URL encoding`]);
    }
    const [form, what, read] = TYPES[type];
    if (!form.test(value)) {
      throw new StatusError('ERR11004', [`path parameter ${name} must be ${what}`]);
    }
    out[name] = read(value);
  }
  return out;
}
