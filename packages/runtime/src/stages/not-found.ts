import { StatusError } from '@chain/errors';
import type { Stage } from '../exchange.js';
import { echoPath } from './routing.js';

export const notFoundStage: Stage = (x) => {
  throw new StatusError('ERR10007', [echoPath(x.path)]);
};
