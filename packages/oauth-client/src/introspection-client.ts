import { ConfigError } from '@chain/errors';
import {
  RefusedIntrospectionClient,
  type Introspected,
  type IntrospectionClient,
  type IntrospectionSource,
} from '@chain/security';
import { clientSecrets, type ClientFiles } from './client-config.js';
import { basicAuth } from './token-request.js';
import { jsonObject, noAnswer, type Transport, type TransportError } from '@chain/http';

/** Names the server and nothing of the request. */
export class IntrospectionFetchError extends Error {
  override readonly name = 'IntrospectionFetchError';
}

const MAX_ANSWER = 16 * 1024;

/** Where the introspection server is (README, "The introspection server (opaque tokens)"). */
export function introspectionEndpoint(files: ClientFiles, verifiesJwt: boolean) {
  const { introspection, key } = files.client.oauth;
  if (!introspection && verifiesJwt) return undefined;
  const why = 'is required to introspect opaque tokens (security.yml enableVerifySwt)';
  // oauth.introspection's server_url and client_id are required by the schema.
  const { server_url, uri, client_id } = introspection ?? key;
  if (!server_url) {
    throw new ConfigError(
      files.clientFile,
      'oauth.key.server_url',
      `${why}: the introspection server is oauth.introspection, or light-4j's oauth.token.key when JWTs are not verified`,
    );
  }
  if (!client_id) throw new ConfigError(files.clientFile, 'oauth.key.client_id', why);
  const secretKey = introspection ? 'introspectionClientSecret' : 'keyClientSecret';
  const clientSecret = clientSecrets(files.client, files.secret)[secretKey];
  if (!clientSecret) throw new ConfigError(files.secretFile, secretKey, why);
  const url = server_url.replace(/\/+$/, '') + uri.replace(/\/+$/, '');
  return { url, clientId: client_id, clientSecret };
}

/** RFC 7662; a reset kept-alive connection is asked again: introspection changes nothing. */
export function createIntrospectionClient(options: {
  endpoint: { url: string; clientId: string; clientSecret: string };
  http: Transport;
  timeoutMs: number;
}): IntrospectionSource {
  const { endpoint, http, timeoutMs } = options;
  const url = new URL(endpoint.url);
  const server = `introspection server ${endpoint.url}`;
  const configured = basicAuth(endpoint.clientId, endpoint.clientSecret);

  return {
    async introspect(token: string, client?: IntrospectionClient): Promise<Introspected> {
      const request = {
        method: 'POST',
        url,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: client ? basicAuth(client.clientId, client.clientSecret) : configured,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        timeoutMs,
        maxBodyBytes: MAX_ANSWER,
      };
      const answer = await http
        .request(request)
        .catch((err: TransportError) => {
          if (err.code !== 'stale_connection') throw err;
          return http.request({ ...request, freshConnection: true });
        })
        .catch((err: TransportError) => {
          throw new IntrospectionFetchError(`${server} ${noAnswer(err, request)}`, { cause: err });
        });
      const body = jsonObject(answer.body);
      // RFC 7662 section 2.2: a token the server does not vouch for is not active; oidc-provider
      // 9 says so of a JWT with 400 unsupported_token_type.
      if (answer.status === 400 && body?.error === 'unsupported_token_type')
        return { active: false };
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

/** An OAuth error code as RFC 6749 5.2 allows it (and short); any other is not repeated. */
const OAUTH_ERROR = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;
