import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { DestinationStream, Logger } from 'pino';
import { type ConfigLoaderOptions } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { createHttpServer, probesOnly, ShutdownGate } from './http-server.js';
import { createLogger, exitOnFatalError, flushLogger } from './logger.js';
import { ownOrigins } from './own-origins.js';
import type { ServiceApp } from './service-app.js';
import { loadServiceConfig, type ServiceConfig } from './service-config.js';
import {
  onStopRequest,
  reportCannotStart,
  listeningMessage,
  runPrimary,
  sendToPrimary,
  watchForStop,
  workerNumber,
  type ListeningPort,
} from './workers.js';

export interface ServiceDefinition {
  bundledDir: string;
  createApp: (config: ServiceConfig, logger: Logger) => ServiceApp;
  loaderOptions?: Omit<ConfigLoaderOptions, 'bundledDir'>;
  logDestination?: DestinationStream;
}

export interface RunningService {
  config: ServiceConfig;
  logger: Logger;
  app: ServiceApp;
  ports: { https?: number; http?: number; probe?: number };
  close(): Promise<void>;
}

/** What keeps it from starting: exit 1, one `Cannot start: ...` line. A primary never resolves. */
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
    // Said once per service: by the primary, or by the first worker for what only it sees.
    if (config.loader.missingOverride && worker === undefined) {
      logger.warn(
        { dir: config.loader.missingOverride },
        'CONFIG_DIR does not exist; using bundled config',
      );
    }
    const tlsOptions = config.server.enableHttps ? loadTls(config) : undefined;
    if (worker === undefined && config.server.workers > 1) {
      runPrimary(config, logger);
      return await new Promise<never>(() => undefined);
    }
    const app = definition.createApp(config, logger);
    if (worker === undefined || worker === 1) {
      for (const { file, key, message } of config.loader.warnings) {
        logger.warn({ file, key }, `${file}${key ? ` key "${key}"` : ''}: ${message}`);
      }
      for (const file of config.loader.unreadFiles()) {
        logger.warn({ file }, `${file}: not read by this service`);
      }
    }
    return await listen(config, app, logger, tlsOptions, worker);
  } catch (err) {
    return cannotStart(err, logger, worker);
  }
}

/** A worker's message is said by the primary, once for the service. */
async function cannotStart(err: unknown, logger?: Logger, worker?: number): Promise<never> {
  const message = (err as Error)?.message ?? String(err);
  const config = err instanceof ConfigError ? err : undefined;
  if (worker !== undefined) {
    await reportCannotStart(message, config?.file, config?.key);
  } else {
    process.stderr.write(`Cannot start: ${message}\n`);
    if (config) logger?.fatal({ file: config.file, key: config.key }, message);
    else logger?.fatal({ err }, `cannot start: ${message}`);
  }
  process.exit(1);
}

export type TlsMaterial = ({ key: Buffer; cert: Buffer } | { pfx: Buffer; passphrase?: string }) &
  Pick<https.ServerOptions, 'requestCert' | 'rejectUnauthorized' | 'ca'>;

const JKS_MAGIC = 0xfeedfeed;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Each failure names the file and the key, never OpenSSL's code. */
export function loadTls(config: ServiceConfig): TlsMaterial {
  const { keyFile, certFile, keystoreName, keystorePass, truststoreName } = config.server;
  const where = config.loader.locate('server').file ?? 'server.yml';
  const fail = (key: string, message: string): never => {
    throw new ConfigError(where, key, message);
  };
  const check = (key: string, message: string, test: () => unknown) => {
    try {
      test();
    } catch {
      fail(key, message);
    }
  };
  const read = (key: string, file: string) =>
    fs.existsSync(file) ? fs.readFileSync(file) : fail(key, `file not found: ${file}`);
  const isJks = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC;

  let material: TlsMaterial;
  if (keystoreName) {
    const pfx = read('keystoreName', keystoreName);
    if (isJks(pfx)) {
      fail(
        'keystoreName',
        `${keystoreName} is a JKS keystore; convert it to PKCS12 (keytool -importkeystore -deststoretype pkcs12) or give keyFile and certFile`,
      );
    }
    material = { pfx, passphrase: keystorePass };
    check(
      'keystoreName',
      `${keystoreName} cannot be opened as a PKCS12 keystore with keystorePass`,
      () => tls.createSecureContext(material),
    );
  } else {
    const key = fs.readFileSync(keyFile as string);
    const cert = fs.readFileSync(certFile as string);
    check('keyFile', 'is not a PEM private key (or it is encrypted)', () =>
      crypto.createPrivateKey(key),
    );
    check('certFile', 'is not a PEM certificate', () => new crypto.X509Certificate(cert));
    check('keyFile', 'is not the private key of the certificate in certFile', () =>
      tls.createSecureContext({ key, cert }),
    );
    material = { key, cert };
  }
  if (!truststoreName) return material;
  const ca = read('truststoreName', truststoreName);
  if (isJks(ca)) {
    fail(
      'truststoreName',
      `${truststoreName} is a JKS trust store; export its CA certificates as PEM (keytool -exportcert -rfc)`,
    );
  }
  const blocks =
    ca.toString('latin1').match(PEM_CERTIFICATE) ??
    fail(
      'truststoreName',
      `${truststoreName} is not a PEM file of CA certificates (a PKCS12 trust store? export it with openssl pkcs12 -nokeys)`,
    );
  for (const block of blocks) {
    check(
      'truststoreName',
      `${truststoreName} holds a certificate that cannot be read`,
      () => new crypto.X509Certificate(block),
    );
  }
  // OpenSSL verifies the chain, the validity dates and the client-auth purpose.
  return { ...material, requestCert: true, rejectUnauthorized: true, ca };
}

async function listen(
  config: ServiceConfig,
  app: ServiceApp,
  log: Logger,
  tlsOptions: TlsMaterial | undefined,
  worker?: number,
): Promise<RunningService> {
  const { server: settings } = config;
  const gate = new ShutdownGate();
  // The Express host's request and response objects are HTTP/1.1's: it serves HTTP/1.1 only.
  const served = { listener: app.listener, gate, http2: app.framework === 'native' };
  const servers: ReturnType<typeof createHttpServer>[] = [];
  const ports: RunningService['ports'] = {};
  const listening: ListeningPort[] = [];
  const twoWayTls = tlsOptions?.requestCert === true;
  // The probes present no client certificate: their port asks for none.
  const probeTls = twoWayTls ? { ...tlsOptions, requestCert: false, ca: undefined } : tlsOptions;

  const open = async (protocol: 'https' | 'http', port: number, probes = false) => {
    const server = probes
      ? createHttpServer(protocol, settings, probesOnly(served), log, probeTls)
      : createHttpServer(protocol, settings, served, log, tlsOptions);
    server.listen(port, settings.ip);
    await once(server, 'listening');
    const bound = (server.address() as AddressInfo).port;
    servers.push(server);
    const where: ListeningPort = {
      protocol,
      ip: settings.ip,
      port: bound,
      framework: app.framework,
      http2: !probes && protocol === 'https' && settings.enableHttp2 && served.http2,
    };
    if (probes) where.probes = true;
    else if (twoWayTls) where.twoWayTls = true;
    ports[probes ? 'probe' : protocol] = bound;
    listening.push(where);
    // In a worker, the primary logs the listening line once every worker listens.
    if (worker === undefined) log.info(where, listeningMessage(where));
  };

  try {
    if (settings.enableHttps) await open('https', settings.httpsPort);
    if (settings.enableHttp) await open('http', settings.httpPort);
    if (settings.probePort !== undefined) {
      await open(settings.enableHttps ? 'https' : 'http', settings.probePort, true);
    }
  } catch (err) {
    for (const s of servers) s.close();
    throw err;
  }
  const main = settings.enableHttps ? 'https' : 'http';
  const origins = ownOrigins(main, ports[main]!, settings.ip, tlsOptions);
  app.setOwnOrigins(origins);
  const { enableVerifyJwt, enableVerifySwt, dpop } = config.security;
  if ((enableVerifyJwt || enableVerifySwt) && dpop.origins.length === 0 && worker === undefined) {
    log.info({ origins }, 'DPoP proofs name these origins (security.yml dpop.origins sets others)');
  }
  app.metrics.start();
  app.exporter?.start();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      log.info('stopping: finishing in-flight requests');
      gate.stop();
      const force = setTimeout(() => gate.closeAll(), settings.shutdownTimeoutMs).unref();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      clearTimeout(force);
      await Promise.all([app.metrics.stop(), app.exporter?.stop()]);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    })());
  function onSignal(signal: NodeJS.Signals) {
    log.info({ signal }, 'signal received');
    void close().then(() => stopped(log));
  }
  if (worker === undefined) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  } else {
    // Ctrl-C reaches every process of the group: only the primary acts on SIGINT.
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
    // Before the primary's own line about this worker, in the output the two share.
    flushLogger(log);
    await sendToPrimary({ chain: 'listening', ports: listening });
  }
  return { config, logger: log, app, ports, close };
}

function stopped(log: Logger): void {
  log.info('stopped');
  process.exit(0);
}
