import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ConfigError, type ConfigLoaderOptions } from '@chain/config';
import { createLogger } from './logger';
import { SERVER_CLASSES, type NodeHandler } from './pipeline';
import type { ServiceApp } from './service-app';
import { loadServiceConfig, type ServiceConfig } from './service-config';

const MAX_HEADER_SIZE = 128 * 1024;

export interface ServiceDefinition {
  /** The service's bundled config folder. */
  bundledDir: string;
  /** Builds the app from checked config; throws a ConfigError for a bad service-specific file. */
  createApp: (config: ServiceConfig, logger: Logger) => ServiceApp;
  /** Loader options for tests (override folder, environment). */
  loaderOptions?: Omit<ConfigLoaderOptions, 'bundledDir'>;
}

export interface RunningService {
  config: ServiceConfig;
  logger: Logger;
  app: NodeHandler;
  /** Bound ports, by protocol. */
  ports: { https?: number; http?: number };
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/**
 * Starts a service: reads and checks its config, builds the app, listens on the ports of
 * server.yml (port 0: any free port, logged), and stops cleanly on SIGTERM/SIGINT (exit 0).
 * A config problem ends the process with exit code 1 and one message naming file and key.
 */
export async function startService(definition: ServiceDefinition): Promise<RunningService> {
  let config: ServiceConfig;
  let logger: Logger | undefined;
  let built: ServiceApp;
  try {
    config = loadServiceConfig({ bundledDir: definition.bundledDir, ...definition.loaderOptions });
    logger = createLogger(config.server.serviceId);
    if (config.loader.missingOverride) {
      logger.warn(
        { dir: config.loader.missingOverride },
        'CONFIG_DIR does not exist; using bundled config',
      );
    }
    built = definition.createApp(config, logger);
    // light-4j keys that do nothing here, and light-4j files nothing read: once each, at start.
    for (const { file, key, message } of config.loader.warnings) {
      logger.warn({ file, key }, `${file}${key ? ` key "${key}"` : ''}: ${message}`);
    }
    for (const file of config.loader.unreadFiles()) {
      logger.warn({ file }, `${file}: not read by this service`);
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Cannot start: ${err.message}\n`);
      logger?.fatal({ file: err.file, key: err.key }, err.message);
      process.exit(1);
    }
    throw err;
  }
  const log = logger;
  const { server: serverConfig } = config;
  const servers: (http.Server | https.Server)[] = [];
  const ports: RunningService['ports'] = {};

  const listen = async (
    server: http.Server | https.Server,
    port: number,
    protocol: 'https' | 'http',
  ) => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, serverConfig.ip, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = (server.address() as AddressInfo).port;
    ports[protocol] = bound;
    servers.push(server);
    log.info(
      { protocol, ip: serverConfig.ip, port: bound },
      `listening on ${protocol} port ${bound}`,
    );
  };

  try {
    if (serverConfig.enableHttps) {
      const credentials = serverConfig.keystoreName
        ? { pfx: fs.readFileSync(serverConfig.keystoreName), passphrase: serverConfig.keystorePass }
        : {
            key: fs.readFileSync(serverConfig.keyFile as string),
            cert: fs.readFileSync(serverConfig.certFile as string),
          };
      const tls = {
        ...credentials,
        // Headers up to 128 KB reach the app (Node's default is 16 KB), so an oversized token
        // gets the catalogue's 401 ERR10000 rather than a bare 431 (light-4j/Undertow allow 1 MB).
        maxHeaderSize: MAX_HEADER_SIZE,
        ...SERVER_CLASSES,
      };
      await listen(https.createServer(tls, built.app), serverConfig.httpsPort, 'https');
    }
    if (serverConfig.enableHttp) {
      await listen(
        http.createServer({ maxHeaderSize: MAX_HEADER_SIZE, ...SERVER_CLASSES }, built.app),
        serverConfig.httpPort,
        'http',
      );
    }
  } catch (err) {
    log.fatal({ err }, `cannot listen: ${(err as Error).message}`);
    process.stderr.write(`Cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  built.metrics.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      log.info('stopping: finishing in-flight requests');
      const force = setTimeout(() => {
        for (const s of servers) s.closeAllConnections();
      }, serverConfig.shutdownTimeoutMs);
      force.unref();
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeIdleConnections();
            }),
        ),
      );
      clearTimeout(force);
      await built.metrics.stop();
      log.info('stopped');
    })();
    return closing;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'signal received');
    void close().then(() => process.exit(0));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);

  return { config, logger: log, app: built.app, ports, close };
}
