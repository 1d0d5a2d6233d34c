// The V8 flags every service process runs with: the images' CMD (scripts/dockerfiles.mjs),
// `pnpm start` (scripts/start.mjs) and the bench's service chains (scripts/bench/lib/chain.mjs),
// so that what is measured is what ships.
//
// --max-semi-space-size=8: V8's young generation (two semi-spaces) at most 2 x 8 MB. Node 24's
// default on a 64-bit machine lets it grow to 2 x 16 MB, and a service reaches that already while
// it loads its configuration. The smaller one lowers every hop's resident set under load, for
// twice the young-generation collections and, in most chain runs, a few per cent of the
// requests a second (docs/benchmarks.md, "Memory per hop", has both measured).
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8'];
