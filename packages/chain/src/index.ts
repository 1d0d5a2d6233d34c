export { loadDownstreamConfig, type ChainLetter } from './chain-config.js';
export { createChainApp } from './chain-app.js';
