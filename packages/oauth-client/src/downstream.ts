import http from 'node:http';
import https from 'node:https';
import { StatusError, isStatusCode } from '@chain/security';

export interface DownstreamOptions {
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
const PASS_THROUGH = new Set(['ERR10009', 'ERR20002', 'ERR20003', 'ERR20004', 'ERR20005']);

/** The time-out of the whole call, told apart from the network errors it destroys the request with. */
class CallTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}

/** A body past `maxBodyBytes`: the call is cut off rather than buffered. */
class BodyTooLarge extends Error {}

/**
 * A JSON GET to one downstream service. Every failure becomes a catalogue StatusError that
 * keeps its cause: refused/unreachable ERR20002, time-out ERR20003, a non-2xx or malformed answer
 * ERR20004 (a downstream's own downstream failure is passed on as it came).
 *
 * node:https directly, not axios: this call is on every chain request, and axios costs about
 * twice the client CPU per call (config merging, interceptors, adapters); see docs/benchmarks.md.
 * The time-out covers the whole call (connect, answer and body), as axios's `timeout` did.
 */
export class Downstream {
  private readonly target: URL;

  constructor(readonly options: DownstreamOptions) {
    this.target = new URL(options.url);
  }

  async getJson(headers: Record<string, string>): Promise<{ body: unknown; status: number }> {
    const { url, timeoutMs } = this.options;
    let response: { status: number; text: string };
    try {
      response = await this.get(headers);
    } catch (err) {
      if (err instanceof CallTimeout) {
        throw new StatusError('ERR20003', [url, String(timeoutMs)], { cause: err });
      }
      if (err instanceof BodyTooLarge) {
        throw new StatusError('ERR20004', [url, err.message], { cause: err });
      }
      throw new StatusError('ERR20002', [url], { cause: err });
    }
    const body = parseJson(response.text);
    if (response.status < 200 || response.status > 299) {
      const code = (body as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && PASS_THROUGH.has(code) && isStatusCode(code)) {
        const description = (body as { description?: unknown }).description;
        const passed = new StatusError(code, [], { cause: body });
        if (typeof description === 'string') passed.body.description = description;
        throw passed;
      }
      const what = typeof code === 'string' ? `${response.status} ${code}` : `${response.status}`;
      throw new StatusError('ERR20004', [url, `HTTP ${what}`], { cause: body });
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
