import { StatusError } from '@chain/errors';
import type { Stage } from '../exchange';
import { echoPath } from './routing';

export const notFoundStage: Stage = (x) => {
  throw new StatusError('ERR10007', [echoPath(x.path)]);
};
