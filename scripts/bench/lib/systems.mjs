// Every system the bench can measure, by case name: how to start it and what it needs. The
// chain comparison (chain-cases.mjs) runs them side by side; profile.mjs profiles one.
import { startBareChain, startPeerChain, startServiceChain } from './chain.mjs';

/** HTTP between hops: server.yml enableHttp2 and client.yml request.enableHttp2 together. */
const http2 = (on) => ({ server: { enableHttp2: on }, request: { enableHttp2: on } });

/**
 * The service chain with the shared parts of `env` (token server, InfluxDB, log folder); with
 * `mtls` the token server that binds tokens to certificates.
 */
const chain =
  (options, { metrics = false } = {}) =>
  (env) =>
    startServiceChain({
      tokenServer: options.mtls ? env.mtlsTokenServer : env.tokenServer,
      influx: metrics ? env.influx : undefined,
      logDir: env.logDir,
      nodeArgs: env.nodeArgs,
      ...options,
    });

/** What `pnpm start` and the compose folders run, with `extra` changed. */
const shipped = (extra = {}, metrics = true) =>
  chain({ security: 'shipped', ...extra }, { metrics });

/** Why `shipped-base` cannot run (run.mjs and profile.mjs check it before anything starts). */
export const NEEDS_BASE = 'shipped-base needs --base DIR: a built checkout to compare with';

const TOKENS = ['tokens'];
const SHIPPED = ['tokens', 'influx'];
const SHIPPED_MTLS = ['mtls-tokens', 'influx'];

/**
 * `start(env)`: the system (its processes and its entry URL); `needs`: what must run first
 * (`tokens`: the token server; `mtls-tokens`: the token server of `pnpm start -- --mtls`, whose
 * callers present the client certificate certs/clients/client.pem); `baseline`: the row its ratio
 * column compares with.
 */
export const SYSTEMS = {
  // Four hops of node:https alone: the limit of this machine.
  baseline: { start: (env) => startBareChain(env), baseline: null },
  // The peer a Node user would write by hand: Fastify 5 + fast-jwt (cache) + undici.
  peer: { start: (env) => startPeerChain(env), baseline: 'baseline', needs: TOKENS },
  'peer-h2': {
    start: (env) => startPeerChain({ ...env, h2: true }),
    baseline: 'baseline',
    needs: TOKENS,
  },
  // The service chain with one feature at a time (no audit line, no metrics).
  'chain-open': { start: chain({ security: 'off' }), baseline: 'baseline' },
  'chain-cache': { start: chain({ security: 'cache' }), baseline: 'baseline', needs: TOKENS },
  'chain-cache-h1': {
    start: chain({ security: 'cache', ...http2(false) }),
    baseline: 'baseline',
    needs: TOKENS,
  },
  'chain-nocache': { start: chain({ security: 'nocache' }), baseline: 'baseline', needs: TOKENS },
  'chain-express': {
    start: chain({ security: 'cache', server: { framework: 'express' } }),
    baseline: 'baseline',
    needs: TOKENS,
  },
  // The peer doing all a shipped hop does: both tokens verified, an audit line per request
  // through pino into a log file, prom-client metrics and /metrics, correlation and trace ids.
  // Listed just before `shipped`, so that the table has it between the peer and ours.
  'peer-full': {
    start: (env) => startPeerChain({ ...env, full: true }),
    baseline: 'baseline',
    needs: TOKENS,
  },
  // What `pnpm start` and the compose folders run: security on with the cache, an audit line per
  // verified request at every hop, metrics to a real InfluxDB and /metrics, logs through a pipe
  // into files; HTTP between hops as the defaults have it. Then each feature off in turn.
  shipped: { start: shipped(), baseline: 'baseline', needs: SHIPPED },
  'shipped-no-audit': {
    start: shipped({ security: 'shipped-no-audit' }),
    baseline: 'baseline',
    needs: SHIPPED,
  },
  'shipped-no-metrics': { start: shipped({}, false), baseline: 'baseline', needs: SHIPPED },
  // A second chain exactly as `shipped`: how far two identical chains differ in one run, the
  // noise floor of the ratios between the shipped cases.
  'shipped-control': { start: shipped(), baseline: 'baseline', needs: SHIPPED },
  // `shipped` as another checkout builds it (`--base DIR`), in the same rounds: a change against
  // the code before it, on the same machine in the same seconds.
  'shipped-base': {
    start: (env) => {
      if (!env.baseRoot) throw new Error(NEEDS_BASE);
      return shipped({ root: env.baseRoot, node: env.baseNode })(env);
    },
    baseline: 'baseline',
    needs: SHIPPED,
  },
  // `shipped` as `pnpm start -- --mtls` runs it: every hop requires a client certificate
  // (server.yml enableTwoWayTls), and each hop's own token is bound to its certificate (RFC 8705)
  // and checked against the calling connection at the next hop; the load generator presents a
  // client certificate too.
  'shipped-mtls': { start: shipped({ mtls: true }), baseline: 'baseline', needs: SHIPPED_MTLS },
  // `shipped` as `pnpm start -- --exchange` runs it: each hop exchanges the token it received
  // for one for the next hop only (RFC 8693), cached per token; the next hop verifies that one
  // token (no X-Scope-Token). Compared with `shipped`: the cost of the exchange, cache warm.
  'shipped-exchange': {
    start: shipped({ exchange: true }),
    baseline: 'baseline',
    needs: SHIPPED,
  },
  'shipped-h1': { start: shipped(http2(false)), baseline: 'baseline', needs: SHIPPED },
  'shipped-h2': { start: shipped(http2(true)), baseline: 'baseline', needs: SHIPPED },
};

export const SYSTEM_NAMES = Object.keys(SYSTEMS);
export const needsOf = (name) => SYSTEMS[name]?.needs ?? [];
