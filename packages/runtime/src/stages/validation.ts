import { coerceParams } from '@chain/openapi';
import type { Stage } from '../exchange.js';

export const validationStage: Stage = (x) => {
  const operation = x.context.operation;
  if (operation && operation.params.length > 0) {
    x.context.params = coerceParams(operation.params, x.context.rawParams);
  }
};
