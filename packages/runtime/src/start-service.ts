import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { DestinationStream, Logger } from 'pino';
import { type ConfigLoaderOptions } from '@chain/config';
import { ConfigError } from '@chain/errors';
import { createHttpServer, probesOnly, ShutdownGate } from './http-server.js';
import { logConfigWarnings } from '@chain/config';
import { createLogger, exitOnFatalError, flushLogger } from './logger.js';
import { ownOrigins } from './own-origins.js';
import type { ConfigRevision } from './config-reload.js';
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
    const config = load(definition);
    logger = createLogger(config.server.serviceId, undefined, definition.logDestination);
    exitOnFatalError(logger);
    // Said once per service: by the primary, or by the first worker for what only it sees.
    if (config.loader.missingOverride && worker === undefined) {
      logger.warn(
        { dir: config.loader.missingOverride },
        'CONFIG_DIR does not exist; using bundled config',
      );
    }
    if (worker === undefined && config.server.workers > 1) {
      runPrimary(config, logger);
      return await new Promise<never>(() => undefined);
    }
    const app = definition.createApp(config, logger);
    if (worker === undefined || worker === 1) {
      logConfigWarnings(logger, config.loader.warnings);
      for (const file of config.loader.unreadFiles()) {
        logger.warn({ file }, `${file}: not read by this service`);
      }
    }
    return await listen(definition, config, app, logger, worker);
  } catch (err) {
    return cannotStart(err, logger, worker);
  }
}

const load = ({ bundledDir, loaderOptions }: ServiceDefinition) =>
  loadServiceConfig({ bundledDir, ...loaderOptions });

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

async function listen(
  definition: ServiceDefinition,
  config: ServiceConfig,
  app: ServiceApp,
  log: Logger,
  worker?: number,
): Promise<RunningService> {
  const { server: settings } = config;
  const tlsOptions = settings.tls;
  const gate = new ShutdownGate();
  // The Express host's request and response objects are HTTP/1.1's: it serves HTTP/1.1 only.
  const served = { listener: app.listener, gate, http2: app.framework === 'native' };
  let current = app;
  const servers: ReturnType<typeof createHttpServer>[] = [];
  const ports: RunningService['ports'] = {};
  const listening: ListeningPort[] = [];
  const twoWayTls = tlsOptions?.requestCert === true;
  // The probes present no client certificate: their port asks for none.
  const probeTls = twoWayTls ? { ...tlsOptions, requestCert: false, ca: undefined } : tlsOptions;

  const open = async (protocol: 'https' | 'http', port: number, probes = false) => {
    const [target, tls] = probes ? [probesOnly(served), probeTls] : [served, tlsOptions];
    const server = createHttpServer(protocol, settings, target, log, tls);
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

  const main = settings.enableHttps ? 'https' : 'http';
  try {
    if (settings.enableHttps) await open('https', settings.httpsPort);
    if (settings.enableHttp) await open('http', settings.httpPort);
    if (settings.probePort !== undefined) await open(main, settings.probePort, true);
  } catch (err) {
    for (const s of servers) s.close();
    throw err;
  }
  const origins = ownOrigins(main, ports[main]!, settings.ip, tlsOptions);
  app.setOwnOrigins(origins);
  // The reloadable files read again, checked as at start; the listeners and TLS stay.
  const revision: ConfigRevision = (config.revision = {
    generation: 1,
    hash: config.loader.digest(),
    reload: async (everywhere) => {
      let next: ServiceApp;
      let fresh: ServiceConfig;
      try {
        fresh = load(definition);
        fresh.revision = revision;
        if (JSON.stringify(fresh.server) !== JSON.stringify(settings)) {
          log.warn(
            { file: fresh.loader.locate('server').file },
            'server.yml: changes take effect at a restart only',
          );
        }
        fresh.server = settings;
        next = definition.createApp(fresh, log);
      } catch (err) {
        const { file, key, reason } =
          err instanceof ConfigError
            ? err
            : { file: undefined, key: undefined, reason: (err as Error).message };
        const why = `${file ?? 'config'}${key ? ` ${key}` : ''}: ${reason}`;
        log.error(
          { file, key, reason },
          `configuration not reloaded, the one in use stays: ${why}`,
        );
        return why;
      }
      next.setOwnOrigins(origins);
      next.metrics.start();
      next.exporter?.start();
      const old = current;
      served.listener = (current = next).listener;
      revision.generation++;
      revision.hash = fresh.loader.digest();
      logConfigWarnings(log, fresh.loader.warnings);
      log.info({ generation: revision.generation, hash: revision.hash }, 'configuration reloaded');
      if (everywhere && worker !== undefined) void sendToPrimary({ chain: 'reload' });
      await Promise.all([old.metrics.stop(), old.exporter?.stop()]);
      return undefined;
    },
  });
  const { enableVerifyJwt, enableVerifySwt, dpop } = config.security;
  if ((enableVerifyJwt || enableVerifySwt) && dpop.origins.length === 0 && worker === undefined) {
    log.info({ origins }, 'DPoP proofs name these origins (security.yml dpop.origins sets others)');
  }
  app.metrics.start();
  app.exporter?.start();
  if (worker === undefined || worker === 1) checkTokenServer(config, log);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      log.info('stopping: finishing in-flight requests');
      gate.stop();
      const force = setTimeout(() => gate.closeAll(), settings.shutdownTimeoutMs).unref();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      clearTimeout(force);
      await Promise.all([current.metrics.stop(), current.exporter?.stop()]);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('SIGHUP', onReload);
    })());
  function onSignal(signal: NodeJS.Signals) {
    log.info({ signal }, 'signal received');
    void close().then(() => stopped(log));
  }
  function onReload(signal: NodeJS.Signals) {
    log.info({ signal }, 'signal received: reloading the configuration');
    void revision.reload();
  }
  process.on('SIGHUP', onReload);
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

/** Said at start, not at the first request that needs a token: asks for a connection only. */
function checkTokenServer({ client, security }: ServiceConfig, log: Logger): void {
  const url = client.oauth.token.server_url;
  if (!url || !security.enableVerifyJwt) return;
  const { hostname, port, protocol } = new URL(url);
  const socket = net.connect(Number(port) || (protocol === 'https:' ? 443 : 80), hostname);
  const ms = client.request.timeout;
  socket.setTimeout(ms, () => socket.destroy(new Error(`no connection within ${ms} ms`)));
  socket.once('connect', () => socket.destroy());
  socket.once('error', ({ message }) =>
    log.warn({ url, cause: message }, `token server ${url} cannot be reached: ${message}`),
  );
}

function stopped(log: Logger): void {
  log.info('stopped');
  process.exit(0);
}
