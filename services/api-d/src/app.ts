import type { Logger } from 'pino';
import { createChainApp } from '@chain/chain';
import type { ServiceApp, ServiceConfig } from '@chain/runtime';

export const createApp = (config: ServiceConfig, logger: Logger): ServiceApp =>
  createChainApp(config, logger, { letter: 'D' });
