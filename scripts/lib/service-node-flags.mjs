// The V8 flags every service process runs with: the images' CMD (scripts/dockerfiles.mjs),
// `pnpm start` (scripts/start.mjs) and the bench's service chains (scripts/bench/lib/chain.mjs),
// so that what is measured is what ships.
//
// --max-semi-space-size=8: V8's young generation (two semi-spaces) at most 2 x 8 MB. Node 24's
// default on a 64-bit machine lets it grow to 2 x 16 MB, and a service reaches that already while
// it loads its configuration; the requests' objects live for milliseconds, so the smaller one
// costs no CPU per request and lowers every hop's resident set under load
// (docs/benchmarks.md, "Memory per hop").
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=8'];
