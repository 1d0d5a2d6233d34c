import os from 'node:os';

/** The `hostname` and `ipAddress` tags of every point: the container id and address in compose. */
export interface HostIdentity {
  hostname: string;
  ipAddress: string;
}

export function hostIdentity(
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces(),
  hostname: string = os.hostname(),
): HostIdentity {
  const found = Object.values(interfaces)
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal);
  return { hostname, ipAddress: found?.address ?? '127.0.0.1' };
}
