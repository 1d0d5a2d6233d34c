import type https from 'node:https';
import axios from 'axios';
import jwksClient from 'jwks-rsa';
import type { ClientConfig } from './client-config';

export interface KeyClientOptions {
  /** client.yml `oauth.key`. */
  key: ClientConfig['oauth']['key'];
  /** secret.yml `keyClientSecret`. */
  secret?: string;
  httpsAgent: https.Agent;
  timeoutMs: number;
}

/** PEM (or public key PEM) of a kid; undefined when the key server does not know the kid. */
export type FetchKey = (kid: string) => Promise<string | undefined>;

/**
 * Why a key could not be fetched: a message naming the server and what went wrong, and nothing
 * of the request (no credentials, no headers), so it can be logged as it is.
 */
export class KeyFetchError extends Error {
  override readonly name = 'KeyFetchError';
}

const PEM = /-----BEGIN (CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY)-----/;

/**
 * The client of the key distribution server (README "Chain calls and tokens"): light-oauth2's
 * `GET {server_url}{uri}/{kid}` with Basic `client_id:keyClientSecret` answering a PEM, or with
 * `oauth.key.jwk: true` the JWKS at `{server_url}{uri}` read through jwks-rsa. Rate limiting,
 * single flight and caching are the caller's (the security package's key store).
 */
export function createKeyClient(options: KeyClientOptions): FetchKey {
  const { key, secret, httpsAgent, timeoutMs } = options;
  if (!key.server_url) throw new TypeError('client.yml oauth.key.server_url is not set');
  const base = key.server_url.replace(/\/+$/, '') + key.uri.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (key.client_id && secret !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${key.client_id}:${secret}`).toString('base64')}`;
  }
  return key.jwk
    ? jwkClient(base, headers, httpsAgent, timeoutMs)
    : pemClient(base, headers, httpsAgent, timeoutMs);
}

function pemClient(
  base: string,
  headers: Record<string, string>,
  httpsAgent: https.Agent,
  timeoutMs: number,
): FetchKey {
  const http = axios.create({
    timeout: timeoutMs,
    httpsAgent,
    responseType: 'text',
    transformResponse: (data: unknown) => data,
    validateStatus: () => true,
    maxRedirects: 0,
    maxContentLength: 64 * 1024,
    proxy: false,
    headers: { ...headers, Accept: 'application/text, text/plain, application/x-pem-file' },
  });
  return async (kid) => {
    let response;
    try {
      response = await http.get(`${base}/${encodeURIComponent(kid)}`);
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'error';
      throw new KeyFetchError(`key server ${base} could not be reached (${code})`);
    }
    if (response.status === 404) return undefined;
    if (response.status !== 200) {
      throw new KeyFetchError(`key server ${base} answered HTTP ${response.status}`);
    }
    const body: unknown = response.data;
    if (typeof body !== 'string' || !PEM.test(body)) {
      throw new KeyFetchError(`key server ${base} did not answer a PEM key`);
    }
    return body;
  };
}

function jwkClient(
  jwksUri: string,
  headers: Record<string, string>,
  httpsAgent: https.Agent,
  timeoutMs: number,
): FetchKey {
  const client = jwksClient({
    jwksUri,
    requestHeaders: headers,
    requestAgent: httpsAgent,
    timeout: timeoutMs,
    // The key store of the security package caches keys and limits look-ups.
    cache: false,
    rateLimit: false,
  });
  return async (kid) => {
    try {
      return (await client.getSigningKey(kid)).getPublicKey();
    } catch (err) {
      const { name, code } = err as { name?: string; code?: string };
      if (name === 'SigningKeyNotFoundError') return undefined;
      throw new KeyFetchError(`key server ${jwksUri} JWKS could not be read (${code ?? name})`);
    }
  };
}
