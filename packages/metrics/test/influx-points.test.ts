import type os from 'node:os';
import { hostIdentity, toInfluxPoints } from '../src/influx-points.js';

const context = {
  serviceId: 'com.networknt.apia-1.0.0',
  hostname: 'box',
  ipAddress: '10.0.0.5',
};

describe('toInfluxPoints', () => {
  it('writes the service view and the client view with light-4j names and tags', () => {
    const points = toInfluxPoints(
      [
        {
          endpoint: '/v1/data@get',
          clientId: 'client-1',
          counts: { request: 3, success: 1, auth_error: 2, request_error: 0, server_error: 0 },
          responseTime: { count: 3, min: 1.5, max: 6, mean: 3.25 },
        },
      ],
      context,
      1_700_000_000_000,
    );
    const service = {
      endpoint: '/v1/data@get',
      clientId: 'client-1',
      hostname: 'box',
      ipAddress: '10.0.0.5',
    };
    const client = {
      endpoint: '/v1/data@get',
      apiName: 'com.networknt.apia-1.0.0',
      hostname: 'box',
      ipAddress: '10.0.0.5',
    };
    const expected = (name: string, value: number) => [
      {
        measurement: `com.networknt.apia-1.0.0.${name}`,
        tags: service,
        fields: { value },
        timestamp: 1_700_000_000_000,
      },
      {
        measurement: `client-1.${name}`,
        tags: client,
        fields: { value },
        timestamp: 1_700_000_000_000,
      },
    ];
    expect(points).toEqual([
      ...expected('request.count', 3),
      ...expected('success.count', 1),
      ...expected('auth_error.count', 2),
      ...expected('request_error.count', 0),
      ...expected('server_error.count', 0),
      ...expected('response_time.min', 1.5),
      ...expected('response_time.max', 6),
      ...expected('response_time.mean', 3.25),
    ]);
  });

  it('leaves the timer out of an idle interval', () => {
    const points = toInfluxPoints(
      [
        {
          endpoint: 'e',
          clientId: 'unknown',
          counts: { request: 0, success: 0, auth_error: 0, request_error: 0, server_error: 0 },
        },
      ],
      context,
      1,
    );
    expect(points.map((p) => p.measurement)).toEqual([
      'com.networknt.apia-1.0.0.request.count',
      'unknown.request.count',
      'com.networknt.apia-1.0.0.success.count',
      'unknown.success.count',
      'com.networknt.apia-1.0.0.auth_error.count',
      'unknown.auth_error.count',
      'com.networknt.apia-1.0.0.request_error.count',
      'unknown.request_error.count',
      'com.networknt.apia-1.0.0.server_error.count',
      'unknown.server_error.count',
    ]);
  });
});

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
