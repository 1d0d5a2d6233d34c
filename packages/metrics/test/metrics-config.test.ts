import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, ConfigLoader } from '@chain/config';
import { metricsConfigSchema, reportIntervalMsOf } from '../src';

function load(yaml: string, env: NodeJS.ProcessEnv = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-config-'));
  fs.writeFileSync(path.join(dir, 'metrics.yml'), yaml);
  return new ConfigLoader({ bundledDir: dir, overrideDir: '/nonexistent', env }).load(
    'metrics',
    metricsConfigSchema,
  );
}

describe('metrics.yml', () => {
  it('reads every key of the spec', () => {
    const config = load(
      [
        'enabled: true',
        'influxdbProtocol: https',
        'influxdbHost: influxdb',
        'influxdbPort: 8087',
        'influxdbName: chain',
        'influxdbUser: writer',
        'influxdbPass: ${INFLUXDB_PASS:dev}',
        'reportInMinutes: 5',
      ].join('\n'),
      { INFLUXDB_PASS: 's3cret' },
    );
    expect(config).toEqual({
      enabled: true,
      influxdbProtocol: 'https',
      influxdbHost: 'influxdb',
      influxdbPort: 8087,
      influxdbName: 'chain',
      influxdbUser: 'writer',
      influxdbPass: 's3cret',
      reportInMinutes: 5,
    });
    expect(reportIntervalMsOf(config)).toBe(300_000);
  });

  it('has defaults for an empty file', () => {
    expect(load('{}')).toEqual({
      enabled: false,
      influxdbProtocol: 'http',
      influxdbHost: 'localhost',
      influxdbPort: 8086,
      influxdbName: 'metrics',
      reportInMinutes: 1,
    });
  });

  it('lets reportIntervalMs win over reportInMinutes', () => {
    const config = load('reportInMinutes: 1\nreportIntervalMs: 250');
    expect(reportIntervalMsOf(config)).toBe(250);
    expect(reportIntervalMsOf(load('reportInMinutes: 0.5'))).toBe(30_000);
  });

  it('keeps a password that looks like a number as text', () => {
    expect(load('influxdbPass: ${INFLUXDB_PASS:1234}').influxdbPass).toBe('1234');
    expect(load('influxdbUser: 42').influxdbUser).toBe('42');
  });

  it.each([
    ['influxdbPort: "x"', 'influxdbPort'],
    ['influxdbPort: 70000', 'influxdbPort'],
    ['influxdbProtocol: udp', 'influxdbProtocol'],
    ['reportInMinutes: 0', 'reportInMinutes'],
    ['reportIntervalMs: 1.5', 'reportIntervalMs'],
    ['reportIntervalMs: 5', 'reportIntervalMs'],
  ])('refuses %s naming the key', (yaml, key) => {
    expect(() => load(yaml)).toThrow(ConfigError);
    expect(() => load(yaml)).toThrow(new RegExp(`at key "${key}"`));
  });

  it('refuses an unknown key', () => {
    expect(() => load('reportInSeconds: 5')).toThrow(/reportInSeconds/);
  });
});
