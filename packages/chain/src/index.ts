export { loadDownstreamConfig, type ChainLetter, type DownstreamConfig } from './chain-config';
export { createChainApp, ownMessages, type ChainAppOptions } from './chain-app';
