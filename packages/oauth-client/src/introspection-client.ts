import { ConfigError } from '@chain/errors';
import {
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from '@chain/security';
import { clientSecrets, type ClientFiles } from './client-config';
import type { Transport, TransportError, TransportResponse } from './transport';

/** Where opaque tokens are introspected, and the client that asks. */
export interface IntrospectionEndpoint {
  /** `{server_url}{uri}` */
  url: string;
  clientId: string;
  clientSecret: string;
}

export interface IntrospectionClientOptions {
  endpoint: IntrospectionEndpoint;
  /** The service's `HttpClient`. */
  http: Transport;
  /** client.yml `request.timeout`: the whole request. */
  timeoutMs: number;
}

/**
 * Why a token could not be introspected: a message naming the server and what went wrong, and
 * nothing of the request (no token, no credentials), so it can be logged as it is. The cause is
 * the transport's failure, when there was no answer.
 */
export class IntrospectionFetchError extends Error {
  override readonly name = 'IntrospectionFetchError';
}

/** Largest answer read: an RFC 7662 answer is a few hundred bytes. */
export const MAX_INTROSPECTION_ANSWER = 16 * 1024;

/**
 * The introspection server of client.yml, checked when security.yml `enableVerifySwt` is on:
 * `oauth.introspection` (ours), else, when the service does not verify JWTs (`verifiesJwt`
 * false), light-4j's place for it: the key section `oauth.key` (light-4j's `oauth.token.key`,
 * whose `server_url`, `uri`, `client_id` and secret its SWT verifier posts to, JWT and SWT
 * verification being exclusive there). Undefined when the service verifies JWTs and names no
 * introspection server (opaque tokens are then refused as invalid JWTs). A missing key is a
 * ConfigError naming the file and key.
 */
export function introspectionEndpoint(
  files: ClientFiles,
  verifiesJwt: boolean,
): IntrospectionEndpoint | undefined {
  const { introspection, key } = files.client.oauth;
  const secrets = clientSecrets(files.client, files.secret);
  const why = 'is required to introspect opaque tokens (security.yml enableVerifySwt)';
  const missing = (file: string, name: string) => new ConfigError(file, name, why);
  const url = (serverUrl: string, uri: string) =>
    serverUrl.replace(/\/+$/, '') + uri.replace(/\/+$/, '');
  if (introspection) {
    const clientSecret = secrets.introspectionClientSecret;
    if (!clientSecret) throw missing(files.secretFile, 'introspectionClientSecret');
    const { server_url, uri, client_id } = introspection;
    return { url: url(server_url, uri), clientId: client_id, clientSecret };
  }
  if (verifiesJwt) return undefined;
  if (!key.server_url) {
    throw new ConfigError(
      files.clientFile,
      'oauth.key.server_url',
      `${why}: the introspection server is oauth.introspection, or light-4j's oauth.token.key when JWTs are not verified`,
    );
  }
  if (!key.client_id) throw missing(files.clientFile, 'oauth.key.client_id');
  if (!secrets.keyClientSecret) throw missing(files.secretFile, 'keyClientSecret');
  return {
    url: url(key.server_url, key.uri),
    clientId: key.client_id,
    clientSecret: secrets.keyClientSecret,
  };
}

/**
 * The client of an introspection server (RFC 7662 section 2): `POST {url}` with
 * `token=<token>&token_type_hint=access_token`, the client authenticated by Basic
 * `client_id:secret` (RFC 6749 2.3.1, as light-4j's SWT verifier and the token requests do): the
 * configured client, or the one a request brought. A kept-alive connection found reset is asked
 * again once on a fresh one (introspection changes nothing at the server).
 *
 * - 200 with a JSON object whose `active` is a boolean: the answer (`active: false` is an
 *   answer, not a failure).
 * - 401 for a request's own client: `RefusedIntrospectionClient`.
 * - Anything else (no connection, no answer within `timeoutMs`, another status, our own client
 *   refused, a body that is not such an object or is larger than 16 KiB): an
 *   `IntrospectionFetchError` naming the server.
 *
 * Caching and single flight are the caller's (the security package's introspection cache).
 */
export function createIntrospectionClient(
  options: IntrospectionClientOptions,
): IntrospectionSource {
  const { endpoint, http, timeoutMs } = options;
  const target = new URL(endpoint.url);
  const server = `introspection server ${endpoint.url}`;
  const configured = basic(endpoint.clientId, endpoint.clientSecret);

  const post = async (body: string, authorization: string): Promise<TransportResponse> => {
    const request = {
      method: 'POST',
      url: target,
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
        Authorization: authorization,
      },
      body,
      timeoutMs,
      maxBodyBytes: MAX_INTROSPECTION_ANSWER,
    };
    try {
      return await http.request(request).catch((err: TransportError) => {
        if (err.kind !== 'stale_connection') throw err;
        return http.request({ ...request, freshConnection: true });
      });
    } catch (err) {
      const { kind, code } = err as TransportError;
      const why =
        kind === 'timeout'
          ? `did not answer within ${timeoutMs} ms`
          : kind === 'body_too_large'
            ? `answered more than ${MAX_INTROSPECTION_ANSWER} bytes`
            : `could not be reached (${code ?? kind})`;
      throw new IntrospectionFetchError(`${server} ${why}`, { cause: err });
    }
  };

  return {
    async introspect(token: string, client?: IntrospectionClient): Promise<Introspected> {
      const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
      const authorization = client ? basic(client.clientId, client.clientSecret) : configured;
      const answer = await post(form.toString(), authorization);
      const body = jsonObject(answer.body);
      if (answer.status !== 200) {
        const error =
          typeof body?.error === 'string' && OAUTH_ERROR.test(body.error) ? ` ${body.error}` : '';
        if (answer.status === 401 && client) {
          throw new RefusedIntrospectionClient(
            `${server} refused the client of the request (HTTP 401${error})`,
          );
        }
        throw new IntrospectionFetchError(`${server} answered HTTP ${answer.status}${error}`);
      }
      if (typeof body?.active !== 'boolean') {
        throw new IntrospectionFetchError(`${server} did not answer an RFC 7662 introspection`);
      }
      return body.active ? { active: true, claims: body } : { active: false };
    },
  };
}

/** An OAuth error code as RFC 6749 5.2 allows it (and short): a server's others are not repeated. */
const OAUTH_ERROR = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

/** `Basic base64(id:secret)`, each form-encoded first (RFC 6749 2.3.1). */
function basic(id: string, secret: string): string {
  const pair = `${encodeURIComponent(id)}:${encodeURIComponent(secret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
