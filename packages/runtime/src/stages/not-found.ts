import { StatusError } from '@chain/errors';
import type { Stage } from '../exchange';
import { echoPath } from './routing';

/** The end of the stages: nothing answered the request. */
export const notFoundStage: Stage = (x) => {
  throw new StatusError('ERR10007', [echoPath(x.path)]);
};
