import path from 'node:path';
import { exitOnFatalError } from '@chain/runtime';
import { startTokenServer } from './token-server.js';

const bundledDir = path.join(import.meta.dirname, '..', 'config');
const server = await startTokenServer({ bundledDir }).catch((err: Error) => {
  process.stderr.write(`Cannot start: ${err.message}\n`);
  return process.exit(1);
});
exitOnFatalError(server.logger);
const onSignal = (signal: NodeJS.Signals) => {
  server.logger.info({ signal }, 'signal received');
  void server.close().then(() => process.exit(0));
};
process.once('SIGTERM', onSignal);
process.once('SIGINT', onSignal);
process.on('SIGHUP', server.reload);
