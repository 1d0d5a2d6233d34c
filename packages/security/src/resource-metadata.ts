import { ConfigError } from '@chain/errors';
import type { SecurityConfig } from './security-config.js';

/** RFC 9728 section 3: where a resource's metadata is, from its origin. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * security.yml `resourceMetadata`: this service's resource identifier (RFC 9728 section 1.2),
 * `resource` when set, else what a DPoP proof names it (`dpop.origins`, else `ownOrigins`, where
 * it listens); undefined when off. Asked per request: the port may be known only once it listens.
 */
export function resourceIdentifier(
  config: SecurityConfig,
  ownOrigins: (() => readonly string[]) | undefined,
): () => string | undefined {
  const { enabled, resource } = config.resourceMetadata;
  if (!enabled) return () => undefined;
  const known = resource ?? config.dpop.origins[0];
  if (known !== undefined) return () => known;
  if (!ownOrigins) {
    const why = 'is required (or dpop.origins) where the verifier is not told where it listens';
    throw new ConfigError('security.yml', 'resourceMetadata.resource', why);
  }
  return () => ownOrigins()[0];
}

/** The metadata's URL: the well-known path between the identifier's host and its path. */
export function resourceMetadataUrl(resource: string): string {
  const { origin, pathname } = new URL(resource);
  return `${origin}${RESOURCE_METADATA_PATH}${pathname === '/' ? '' : pathname}`;
}
