import { StatusError } from '@chain/errors';
import type { PathParam } from './spec.js';

const INTEGER = /^-?\d{1,15}$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

export type ParamValue = string | number | boolean;

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
    switch (type) {
      case 'integer':
        if (!INTEGER.test(value)) throw invalid(name, 'an integer');
        out[name] = Number(value);
        break;
      case 'number':
        if (!NUMBER.test(value)) throw invalid(name, 'a number');
        out[name] = Number(value);
        break;
      case 'boolean':
        if (value !== 'true' && value !== 'false') throw invalid(name, 'a boolean');
        out[name] = value === 'true';
        break;
      default:
        out[name] = value;
    }
  }
  return out;
}

function invalid(name: string, what: string): StatusError {
  return new StatusError('ERR11004', [`path parameter ${name} must be ${what}`]);
}
