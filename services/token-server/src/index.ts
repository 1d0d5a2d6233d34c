import path from 'node:path';
import { exitOnFatalError, exitOnOldNode } from '@chain/runtime';
import { startTokenServer } from './token-server';

async function main() {
  exitOnOldNode();
  try {
    const server = await startTokenServer({ bundledDir: path.join(__dirname, '..', 'config') });
    exitOnFatalError(server.logger);
    const onSignal = (signal: NodeJS.Signals) => {
      server.logger.info({ signal }, 'signal received');
      void server.close().then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    process.on('SIGHUP', () => void server.reload());
  } catch (err) {
    process.stderr.write(`Cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

void main();
