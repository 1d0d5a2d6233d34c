import type os from 'node:os';
import { hostIdentity } from '../src/host-identity';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal: boolean) =>
  ({ address, family, internal }) as os.NetworkInterfaceInfo;

describe('hostIdentity', () => {
  it('takes the first external IPv4 address', () => {
    expect(
      hostIdentity(
        {
          lo: [iface('127.0.0.1', 'IPv4', true)],
          eth0: [iface('fe80::1', 'IPv6', false), iface('172.18.0.4', 'IPv4', false)],
        },
        'c0ffee',
      ),
    ).toEqual({ hostname: 'c0ffee', ipAddress: '172.18.0.4' });
  });

  it('falls back to loopback', () => {
    expect(hostIdentity({ lo: [iface('127.0.0.1', 'IPv4', true)], none: undefined }, 'h')).toEqual({
      hostname: 'h',
      ipAddress: '127.0.0.1',
    });
  });

  it('reads the machine by default', () => {
    const found = hostIdentity();
    expect(found.hostname.length).toBeGreaterThan(0);
    expect(found.ipAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });
});
