import http from 'node:http';
import https from 'node:https';
import { STATUS, StatusError, isStatusCode, type StatusCode } from '@chain/security';

export interface DownstreamOptions {
  /**
   * The downstream's name in our error descriptions, e.g. `api-b`: a caller learns which service
   * failed, never its internal URL (the URL is in the log line).
   */
  name: string;
  /** Full URL of the downstream operation, e.g. `https://api-b:7442/v1/data`. */
  url: string;
  timeoutMs: number;
  httpsAgent: https.Agent;
  /** Largest body accepted from the downstream (default 1 MiB); a larger one is ERR20004. */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY = 1024 * 1024;
/** Plain-HTTP downstreams (an `http://` host in api_x.yml) share one keep-alive agent. */
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** Codes that already describe a failure further down the chain: passed on unchanged. */
const PASS_THROUGH: readonly StatusCode[] = [
  'ERR10009',
  'ERR20002',
  'ERR20003',
  'ERR20004',
  'ERR20005',
];

/**
 * The descriptions a service of ours writes for each passed-on code, as patterns: the row's text
 * with each argument a short plain word (a service name, a kid, a number, `HTTP 502 ERR20002`).
 * A description that does not match (markup, a stack, a URL, 20 KB of anything) is not echoed.
 */
const OUR_DESCRIPTIONS = new Map(
  PASS_THROUGH.map((code) => {
    const row = STATUS[code].description as (...args: string[]) => string;
    const marker = '\u0000';
    const patterns = [row(), row(marker), row(marker, marker)].map((text) => {
      const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return `^${escaped.split(marker).join('[A-Za-z0-9._ -]{1,64}')}$`;
    });
    return [code, new RegExp([...new Set(patterns)].join('|'))];
  }),
);

/** Our own words for a passed-on code whose description was not one of ours. */
const fallbackArgs = (code: StatusCode, name: string): string[] =>
  code === 'ERR20005' || code === 'ERR10009' ? [] : [`beyond ${name}`];

/** The time-out of the whole call, told apart from the network errors it destroys the request with. */
class CallTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}

/** A body past `maxBodyBytes`: the call is cut off rather than buffered. */
class BodyTooLarge extends Error {}

/**
 * A JSON GET to one downstream service. Every failure becomes a catalogue StatusError that
 * keeps its cause (for the log): refused/unreachable ERR20002, time-out ERR20003, a non-2xx or
 * malformed answer ERR20004. A failure further down the chain (one of our codes for it) is passed
 * on with its code unchanged; its description too when it is one of ours, else in our words.
 * Nothing else of the downstream's answer reaches the caller.
 *
 * node:https directly, not axios: this call is on every chain request and axios costs far more
 * client CPU per call (docs/benchmarks.md has the measurement). The time-out covers the whole
 * call (connect, answer and body).
 */
export class Downstream {
  private readonly target: URL;

  constructor(readonly options: DownstreamOptions) {
    this.target = new URL(options.url);
  }

  async getJson(headers: Record<string, string>): Promise<{ body: unknown; status: number }> {
    const { name, url, timeoutMs } = this.options;
    let response: { status: number; text: string };
    try {
      response = await this.get(headers);
    } catch (err) {
      if (err instanceof CallTimeout) {
        throw new StatusError('ERR20003', [name, String(timeoutMs)], { cause: err });
      }
      if (err instanceof BodyTooLarge) {
        throw new StatusError('ERR20004', [name, err.message], { cause: err });
      }
      throw new StatusError('ERR20002', [name], { cause: err });
    }
    const body = parseJson(response.text);
    if (response.status < 200 || response.status > 299) {
      const cause = new Error(
        `${url} answered HTTP ${response.status}: ${response.text.slice(0, 200)}`,
      );
      const code = (body as { code?: unknown } | null)?.code;
      if (isStatusCode(code) && PASS_THROUGH.includes(code)) {
        const passed = new StatusError(code, fallbackArgs(code, name), { cause });
        const description = (body as { description?: unknown }).description;
        if (typeof description === 'string' && OUR_DESCRIPTIONS.get(code)!.test(description)) {
          passed.body.description = description;
        }
        throw passed;
      }
      // Our own code for the refusal (ERR10000 …) is worth telling; anything else is not echoed.
      const what = isStatusCode(code)
        ? `HTTP ${response.status} ${code}`
        : `HTTP ${response.status}`;
      throw new StatusError('ERR20004', [name, what], { cause });
    }
    return { body, status: response.status };
  }

  private get(headers: Record<string, string>): Promise<{ status: number; text: string }> {
    const { httpsAgent, timeoutMs, maxBodyBytes = DEFAULT_MAX_BODY } = this.options;
    const secure = this.target.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).get(
        this.target,
        {
          agent: secure ? httpsAgent : httpAgent,
          headers: { Accept: 'application/json', ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBodyBytes) {
              clearTimeout(timer);
              reject(new BodyTooLarge(`a body larger than ${maxBodyBytes} bytes`));
              res.destroy();
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', reject);
        },
      );
      const timer = setTimeout(
        () => req.destroy(new CallTimeout(`no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }
}

/** The body as JSON when it is JSON, else the text itself (judged by the caller). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
