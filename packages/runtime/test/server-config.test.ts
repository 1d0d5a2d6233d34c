import { loadServiceConfig } from '../src';
import { configDir } from '../../../test/support/service-process';
import { FIXTURE } from './support';

const load = (serverYml: string) =>
  loadServiceConfig({ bundledDir: FIXTURE, overrideDir: configDir({ 'server.yml': serverYml }) });

describe('server.yml', () => {
  it('has the documented defaults', () => {
    expect(load('serviceId: s\nenableHttps: false\n').server).toEqual({
      serviceId: 's',
      ip: '0.0.0.0',
      httpsPort: 8443,
      enableHttps: false,
      httpPort: 8080,
      enableHttp: false,
      framework: 'native',
      maxHeaderSize: 131072,
      headersTimeoutMs: 20000,
      requestTimeoutMs: 30000,
      keepAliveTimeoutMs: 72000,
      shutdownTimeoutMs: 10000,
    });
  });

  it.each([
    ['framework: koa', 'framework": Invalid option: expected one of "native"|"express"'],
    ['headersTimeoutMs: 40000', 'headersTimeoutMs": must not be longer than requestTimeoutMs'],
    ['keepAliveTimeoutMs: 0', 'keepAliveTimeoutMs": Too small: expected number to be >=1'],
    ['maxHeaderSize: 100', 'maxHeaderSize": Too small: expected number to be >=1024'],
    ['enableHttps: true', 'keyFile": is required with enableHttps'],
  ])('refuses %s, naming the key', (line, message) => {
    const base = line.startsWith('enableHttps')
      ? 'serviceId: s\n'
      : 'serviceId: s\nenableHttps: false\n';
    expect(() => load(`${base}${line}\n`)).toThrow(
      new RegExp(`server\\.yml at key "${message.replace(/[|()]/g, '\\$&')}`),
    );
  });
});
