export { loadDownstreamConfig, type ChainLetter } from './chain-config';
export { createChainApp } from './chain-app';
