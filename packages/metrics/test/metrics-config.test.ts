import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigLoader } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { metricsConfigSchema, prometheusConfigSchema, reportIntervalMsOf } from '../src/index.js';

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
        'bufferIntervals: 120',
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
      bufferIntervals: 120,
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
      bufferIntervals: 60,
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
    ['bufferIntervals: 0', 'bufferIntervals'],
    ['bufferIntervals: 2.5', 'bufferIntervals'],
    ['bufferIntervals: "many"', 'bufferIntervals'],
  ])('refuses %s naming the key', (yaml, key) => {
    expect(() => load(yaml)).toThrow(ConfigError);
    expect(() => load(yaml)).toThrow(new RegExp(`at key "${key}"`));
  });

  it('refuses an unknown key, naming the closest known one', () => {
    expect(() => load('reportInSeconds: 5')).toThrow(
      /at key "reportInSeconds": unknown key; did you mean "reportInMinutes"\?/,
    );
  });

  it("reads light-4j's newer key names beside the influxdb* ones", () => {
    const config = load(
      [
        'enabled: true',
        'serverProtocol: https',
        'serverHost: influx.example',
        'serverPort: 8087',
        'serverName: chain',
        'serverUser: writer',
        'serverPass: 123456',
      ].join('\n'),
    );
    expect(config).toMatchObject({
      influxdbProtocol: 'https',
      influxdbHost: 'influx.example',
      influxdbPort: 8087,
      influxdbName: 'chain',
      influxdbUser: 'writer',
      influxdbPass: '123456',
    });
    expect(() => load('serverHost: a\ninfluxdbHost: b')).toThrow(
      /at key "serverHost": is set twice with different values, also as "influxdbHost"; keep one/,
    );
  });

  it("loads light-4j's other metrics.yml keys with a warning, silent when off", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-config-'));
    fs.writeFileSync(
      path.join(dir, 'metrics.yml'),
      'enableJVMMonitor: false\nsendCallerId: false\nproductName: http-sidecar\nserverPath: /apm\n',
    );
    const loader = new ConfigLoader({ bundledDir: dir, env: {} });
    loader.load('metrics', metricsConfigSchema);
    expect(loader.warnings.map((w) => w.key)).toEqual(['serverPath', 'productName']);
  });
});

describe('prometheus.yml', () => {
  const loadProm = (yaml: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prometheus-config-'));
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), yaml);
    return new ConfigLoader({ bundledDir: dir, env: {} }).load(
      'prometheus',
      prometheusConfigSchema,
    );
  };

  it("has light-4j's keys and defaults (off)", () => {
    expect(loadProm('{}')).toEqual({ enabled: false, enableHotspot: false });
    expect(loadProm('enabled: true\nenableHotspot: true')).toEqual({
      enabled: true,
      enableHotspot: true,
    });
    expect(() => loadProm('enable: true')).toThrow(/did you mean "enabled"\?/);
  });
});
