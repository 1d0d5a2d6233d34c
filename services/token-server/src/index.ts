import path from 'node:path';
import { ConfigError } from '@chain/errors';
import { exitOnFatalError } from '@chain/runtime';
import { startTokenServer } from './token-server';

async function main() {
  try {
    const server = await startTokenServer({ bundledDir: path.join(__dirname, '..', 'config') });
    exitOnFatalError(server.logger);
    const onSignal = (signal: NodeJS.Signals) => {
      server.logger.info({ signal }, 'signal received');
      void server.close().then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // Key rotation without a restart: the files are read again on SIGHUP.
    process.on('SIGHUP', () => void server.reload());
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : (err as Error).message;
    process.stderr.write(`Cannot start: ${message}\n`);
    process.exit(1);
  }
}

void main();
