// How every service is bundled: its compiled entry (build/index.js, tsc's output) and every module
// it imports, the workspace packages and their npm dependencies, into dist/index.js, the file
// that runs (`node services/<name>/dist/index.js`, the images' CMD, `pnpm start`). A module only
// imported when used (the Redis client of limit.yml and security.yml's dpop.redis) stays a chunk
// of its own beside it, loaded on first use.
//
// Why: a service run from node_modules loads each package's whole sources (V8 keeps every
// module's source text on the heap) and modules the service never calls. One file, without
// comments and whitespace and without what is never imported, starts api-d 8 MB smaller in
// resident memory (docs/benchmarks.md, "Memory per hop"). Only whitespace and comments go: names
// are kept (a stack trace in a log still reads as the code does), and the code is not
// rewritten (oxc's compressor changed what oidc-provider answers: a token without expires_in).
//
// Express stays outside (server.yml `framework: express` requires it when first used): the
// services that can run on it depend on it, the token server on nothing. Run from a service's
// folder (its `build` script) it bundles that service; from elsewhere, every service.
import fs from 'node:fs';
import path from 'node:path';

const services = path.join(import.meta.dirname, 'services');
const here = path.relative(services, process.cwd());
const names =
  here && !here.startsWith('..') && !here.includes(path.sep)
    ? [here]
    : fs.readdirSync(services).filter((n) => fs.existsSync(path.join(services, n, 'package.json')));

/** `@redis/client` of `.../node_modules/@redis/client/dist/index.js` as `redis-client`. */
function packageName(file) {
  const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file ?? '');
  return match?.[1].replace('@', '').replace('/', '-');
}

export default names.map((name) => {
  const dir = path.join(services, name);
  // Only this build's files in dist: no chunk of an earlier build left beside them.
  fs.rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
  return {
    input: path.join(dir, 'build', 'index.js'),
    platform: 'node',
    external: ['express'],
    logLevel: 'warn',
    // depd (Express's and raw-body's dependency) calls eval on purpose, to name the functions it
    // wraps; the warning about it is not this code's.
    onLog(level, log, print) {
      if (log.code === 'EVAL' && log.id?.includes('/depd/')) return;
      print(level, log);
    },
    output: {
      dir: path.join(dir, 'dist'),
      format: 'esm',
      entryFileNames: 'index.js',
      // A lazily loaded chunk named for the package it starts with (redis-client.js).
      chunkFileNames: ({ facadeModuleId }) => `${packageName(facadeModuleId) ?? '[name]'}.js`,
      comments: false,
      minify: { compress: false, mangle: false, codegen: { removeWhitespace: true } },
    },
  };
});
