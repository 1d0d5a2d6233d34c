export { loadDownstreamConfig, type ChainLetter, type DownstreamConfig } from './chain-config';
export { createChainApp, type ChainAppOptions } from './chain-app';
