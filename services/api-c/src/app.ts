import { createChainApp } from '@chain/chain';

export const createApp = createChainApp('C');
