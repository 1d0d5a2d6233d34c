import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { DestinationStream, Logger } from 'pino';
import { type ConfigLoaderOptions } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { clientAuthOptions } from './client-certificate';
import { createHttpServer, probesOnly, ShutdownGate } from './http-server';
import { createLogger, exitOnFatalError, flushLogger } from './logger';
import type { ServiceApp } from './service-app';
import { loadServiceConfig, type ServiceConfig } from './service-config';
import {
  onStopRequest,
  reportCannotStart,
  reportListening,
  listeningMessage,
  runPrimaryProcess,
  watchForStop,
  workerNumber,
  type ListeningPort,
} from './workers';

export interface ServiceDefinition {
  /** The service's bundled config folder. */
  bundledDir: string;
  /** Builds the app from checked config; throws a ConfigError for a bad service-specific file. */
  createApp: (config: ServiceConfig, logger: Logger) => ServiceApp;
  /** Loader options for tests (override folder, environment). */
  loaderOptions?: Omit<ConfigLoaderOptions, 'bundledDir'>;
  /** Where the log lines go instead of stdout (tests). */
  logDestination?: DestinationStream;
}

export interface RunningService {
  config: ServiceConfig;
  logger: Logger;
  app: ServiceApp;
  /** Bound ports, by protocol; `probe`: server.yml `probePort`'s. */
  ports: { https?: number; http?: number; probe?: number };
  /**
   * Stops: no new connections, 503 ERR20006 for new requests on open ones, in-flight requests
   * finish (at most server.yml `shutdownTimeoutMs`), then the metrics' last interval; resolves.
   */
  close(): Promise<void>;
}

/**
 * Starts a service: reads and checks its config, builds the app, listens on the ports of
 * server.yml (port 0: any free port, logged), and stops cleanly on SIGTERM/SIGINT (exit 0).
 * Anything that keeps it from starting ends the process with exit code 1 and one line on stderr
 * (`Cannot start: ...`); a config problem names the file and the key.
 *
 * With server.yml `workers` above 1, this process becomes the primary of a node:cluster
 * (./workers): it checks the config, forks the workers (each runs this same script and serves the
 * port) and never resolves; in a worker, this runs the service and answers to the primary.
 */
export async function startService(definition: ServiceDefinition): Promise<RunningService> {
  let logger: Logger | undefined;
  const worker = workerNumber();
  if (worker !== undefined) watchForStop();
  try {
    const config = loadServiceConfig({
      bundledDir: definition.bundledDir,
      ...definition.loaderOptions,
    });
    logger = createLogger(config.server.serviceId, undefined, definition.logDestination);
    exitOnFatalError(logger);
    const primary = worker === undefined && config.server.workers > 1;
    // Said once per service: by the primary, or by the first worker for what only it sees.
    if (config.loader.missingOverride && worker === undefined) {
      logger.warn(
        { dir: config.loader.missingOverride },
        'CONFIG_DIR does not exist; using bundled config',
      );
    }
    const tlsFiles = config.server.enableHttps ? loadTls(config) : undefined;
    if (primary) {
      runPrimaryProcess({ config, logger });
      return await new Promise<never>(() => undefined);
    }
    const app = definition.createApp(config, logger);
    // light-4j keys that do nothing here, and light-4j files nothing read: once each, at start.
    if (worker === undefined || worker === 1) {
      for (const { file, key, message } of config.loader.warnings) {
        logger.warn({ file, key }, `${file}${key ? ` key "${key}"` : ''}: ${message}`);
      }
      for (const file of config.loader.unreadFiles()) {
        logger.warn({ file }, `${file}: not read by this service`);
      }
    }
    return await listen(config, app, logger, tlsFiles, worker);
  } catch (err) {
    if (worker !== undefined) return workerCannotStart(err);
    return cannotStart(err, logger);
  }
}

/** A worker that cannot start tells the primary, which says it once for the service. */
async function workerCannotStart(err: unknown): Promise<never> {
  const message = (err as Error)?.message ?? String(err);
  const config = err instanceof ConfigError ? err : undefined;
  await reportCannotStart(message, config?.file, config?.key);
  process.exit(1);
}

function cannotStart(err: unknown, logger: Logger | undefined): never {
  const message = (err as Error)?.message ?? String(err);
  process.stderr.write(`Cannot start: ${message}\n`);
  if (err instanceof ConfigError) logger?.fatal({ file: err.file, key: err.key }, message);
  else logger?.fatal({ err }, `cannot start: ${message}`);
  process.exit(1);
}

/** What the HTTPS listener is given: a PEM key and certificate, or a PKCS12 keystore. */
export type TlsMaterial = { key: Buffer; cert: Buffer } | { pfx: Buffer; passphrase?: string };

/**
 * server.yml `keyFile` and `certFile`, checked: a PEM private key, a PEM certificate, and a key
 * that belongs to the certificate (each failure names the file and the key, never OpenSSL's
 * code); or light-4j's `keystoreName` (a PKCS12 keystore, checked by server.yml's schema).
 */
export function loadTls(config: ServiceConfig): TlsMaterial {
  const { keystoreName, keystorePass } = config.server;
  if (keystoreName) return { pfx: fs.readFileSync(keystoreName), passphrase: keystorePass };
  const file = config.loader.locate('server').file ?? 'server.yml';
  const key = fs.readFileSync(config.server.keyFile as string);
  const cert = fs.readFileSync(config.server.certFile as string);
  try {
    crypto.createPrivateKey(key);
  } catch {
    throw new ConfigError(file, 'keyFile', 'is not a PEM private key (or it is encrypted)');
  }
  try {
    new crypto.X509Certificate(cert);
  } catch {
    throw new ConfigError(file, 'certFile', 'is not a PEM certificate');
  }
  try {
    tls.createSecureContext({ key, cert });
  } catch {
    throw new ConfigError(file, 'keyFile', 'is not the private key of the certificate in certFile');
  }
  return { key, cert };
}

async function listen(
  config: ServiceConfig,
  app: ServiceApp,
  log: Logger,
  tlsFiles: TlsMaterial | undefined,
  worker?: number,
): Promise<RunningService> {
  const { server: serverConfig } = config;
  const gate = new ShutdownGate();
  // The Express host's request and response objects are HTTP/1.1's: it serves HTTP/1.1 only.
  const served = { listener: app.listener, gate, http2: app.framework === 'native' };
  const servers: (http.Server | http2.Http2SecureServer)[] = [];
  const ports: RunningService['ports'] = {};
  const listening: ListeningPort[] = [];

  // server.yml enableTwoWayTls: client certificates on the service's port, never on the probes'.
  const clientAuth = tlsFiles && clientAuthOptions(serverConfig);
  const open = async (protocol: 'https' | 'http', port: number, probes = false) => {
    const server = probes
      ? createHttpServer(protocol, serverConfig, probesOnly(served), log, tlsFiles)
      : createHttpServer(
          protocol,
          serverConfig,
          served,
          log,
          clientAuth ? { ...tlsFiles, ...clientAuth } : tlsFiles,
        );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, serverConfig.ip, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = (server.address() as AddressInfo).port;
    servers.push(server);
    const http2 = !probes && protocol === 'https' && serverConfig.enableHttp2 && served.http2;
    const where: ListeningPort = {
      protocol,
      ip: serverConfig.ip,
      port: bound,
      framework: app.framework,
      http2,
    };
    if (probes) where.probes = true;
    else if (clientAuth) where.twoWayTls = true;
    ports[probes ? 'probe' : protocol] = bound;
    listening.push(where);
    // In a worker, the primary logs the listening line once every worker listens.
    if (worker === undefined) log.info(where, listeningMessage(where));
  };

  try {
    if (serverConfig.enableHttps) await open('https', serverConfig.httpsPort);
    if (serverConfig.enableHttp) await open('http', serverConfig.httpPort);
    if (serverConfig.probePort !== undefined) {
      await open(serverConfig.enableHttps ? 'https' : 'http', serverConfig.probePort, true);
    }
  } catch (err) {
    for (const s of servers) s.close();
    throw err;
  }
  app.metrics.start();
  app.exporter?.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      log.info('stopping: finishing in-flight requests');
      gate.stop();
      const force = setTimeout(() => {
        gate.closeAll();
      }, serverConfig.shutdownTimeoutMs);
      force.unref();
      await Promise.all(
        servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
      clearTimeout(force);
      await Promise.all([app.metrics.stop(), app.exporter?.stop()]);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    })();
    return closing;
  };
  function onSignal(signal: NodeJS.Signals) {
    log.info({ signal }, 'signal received');
    void close().then(() => stopped(log));
  }
  if (worker === undefined) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  } else {
    // The primary stops the workers (a terminal's Ctrl-C reaches every process of the group:
    // the primary's SIGINT is the one acted on); a SIGTERM sent to a worker itself stops it.
    let stopping = false;
    const stop = (signal?: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      if (signal) log.info({ signal }, 'signal received');
      void close().then(() => stopped(log));
    };
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', stop);
    onStopRequest(() => stop());
    log.info({ pid: process.pid, ports }, `worker ${worker} serving`);
    // Written before the primary hears of it, so that its own line about this worker (listening,
    // worker replaced) comes after this one in the output the two share.
    flushLogger(log);
    await reportListening(listening);
  }

  return { config, logger: log, app, ports, close };
}

/** The end of a graceful stop: the last line (written on exit, or given up on with the reader gone), exit 0. */
function stopped(log: Logger): void {
  log.info('stopped');
  process.exit(0);
}
