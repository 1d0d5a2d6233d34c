import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance, isAxiosError } from 'axios';
import { StatusError, isStatusCode } from '@chain/security';

export interface DownstreamOptions {
  /** Full URL of the downstream operation, e.g. `https://api-b:7442/v1/data`. */
  url: string;
  timeoutMs: number;
  httpsAgent: https.Agent;
}

/** Codes that already describe a failure further down the chain: passed on unchanged. */
const PASS_THROUGH = new Set(['ERR10009', 'ERR20002', 'ERR20003', 'ERR20004', 'ERR20005']);

/**
 * A JSON GET to one downstream service. Every failure becomes a catalogue StatusError that
 * keeps its cause: refused/unreachable ERR20002, time-out ERR20003, a non-2xx or malformed answer
 * ERR20004 (a downstream's own downstream failure is passed on as it came).
 */
export class Downstream {
  private readonly http: AxiosInstance;

  constructor(readonly options: DownstreamOptions) {
    this.http = axios.create({
      timeout: options.timeoutMs,
      httpsAgent: options.httpsAgent,
      httpAgent: new http.Agent({ keepAlive: true }),
      // Status and body are judged here, not by axios.
      validateStatus: () => true,
      responseType: 'json',
      maxRedirects: 0,
      proxy: false,
    });
  }

  async getJson(headers: Record<string, string>): Promise<{ body: unknown; status: number }> {
    const { url, timeoutMs } = this.options;
    let response;
    try {
      response = await this.http.get(url, { headers: { Accept: 'application/json', ...headers } });
    } catch (err) {
      if (isAxiosError(err) && (err.code === 'ECONNABORTED' || err.code === 'ETIMEDOUT')) {
        throw new StatusError('ERR20003', [url, String(timeoutMs)], { cause: err });
      }
      throw new StatusError('ERR20002', [url], { cause: err });
    }
    const body: unknown = response.data;
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
}
