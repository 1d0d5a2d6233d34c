#!/usr/bin/env node
// The local run (pnpm start): builds what changed (with progress), starts the token/key server,
// the four chain services and the petstore as processes over HTTPS, security on
// (config/local/<service>), prints each URL and working curl lines, and stops everything on
// Ctrl-C. Each service's log is appended to .run/logs/<service>.log (one JSON line per event).
//   node scripts/start.mjs [--security off] [--mtls | --dpop] [--exchange] [--no-build]
// --mtls: two-way TLS on every hop, and certificate-bound tokens (RFC 8705). Each service
// requires a client certificate of the client CA (certs/clients/ca.crt) and presents its own
// (certs/clients/<service>.pem) on every call; the token server asks for certificates too, each
// hop authenticates there with its certificate (tls_client_auth) and its own tokens are bound to
// it; the printed curl lines present certs/clients/client.pem. Its config is
// config/local/<service> with config/local/mtls/<service> over it, file by file, in
// .run/config/<service>.
// --dpop: each hop's own tokens are bound to its DPoP key (RFC 9449: a key made at start, a new
// proof with every call), over one-way TLS: config/local/dpop/<service> over
// config/local/<service>. Not with --mtls: there the certificate is what a token is bound to.
// --exchange (alone, or with --mtls or --dpop): each hop exchanges the token it received for
// one for the next hop only (RFC 8693, bound as its own tokens are) and accepts only tokens for
// itself: config/local/exchange[/mtls|/dpop]/<service> over the folders above.
import './lib/node-version.cjs'; // first: Node 24 or later, else one line and exit 1
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from './lib/service-node-flags.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const certs = process.env.CERTS_DIR ?? path.join(root, 'certs');
const securityOff = process.argv.includes('--security') && process.argv.includes('off');
// `pnpm start -- --mtls` (pnpm passes what follows its `--`).
const mtls = process.argv.includes('--mtls');
const dpop = process.argv.includes('--dpop');
const exchange = process.argv.includes('--exchange');
const logs = path.join(root, '.run', 'logs');
const noOverride = path.join(root, '.run', 'no-override'); // empty: bundled config only
fs.mkdirSync(logs, { recursive: true });
fs.mkdirSync(noOverride, { recursive: true });

const services = [
  {
    name: 'token-server',
    urls: ['https://localhost:6882/oauth2/token', 'https://localhost:6886/oauth2/key/100'],
  },
  { name: 'api-d', urls: ['https://localhost:7444/v1/data'] },
  { name: 'api-c', urls: ['https://localhost:7443/v1/data'] },
  { name: 'api-b', urls: ['https://localhost:7442/v1/data'] },
  { name: 'api-a', urls: ['https://localhost:7441/v1/data'] },
  { name: 'petstore', urls: ['https://localhost:8443/v2/pet/1'] },
];

/** @type {{ name: string, proc: import('@chain/testkit').RunningProcess }[]} */
const running = [];
let stopping = false;

/**
 * `tsc -b` over the workspace, printing each project it builds (a first build takes a while;
 * later ones only rebuild what changed), then every service bundled into its dist/index.js
 * (rolldown.config.mjs), as `pnpm build` and the images do.
 */
async function build() {
  const started = Date.now();
  const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;
  const heartbeat = setInterval(() => console.log(`  … still building (${seconds()})`), 10000);
  try {
    let built = 0;
    await tool(['typescript/bin/tsc', '-b', '--verbose'], (d) => {
      for (const match of d.matchAll(/Building project '([^']+)'/g)) {
        built++;
        console.log(`  building ${path.relative(root, path.dirname(match[1]))}`);
      }
    });
    console.log(built ? `built ${built} project(s) in ${seconds()}` : 'build up to date');
    await tool(['rolldown/bin/cli.mjs', '-c', 'rolldown.config.mjs']);
    console.log(`bundled the services (${seconds()})`);
  } finally {
    clearInterval(heartbeat);
  }
}

/** A build tool of node_modules run by this node; rejects with its errors when it fails. */
function tool([script, ...args], onData = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules', script), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (d) => {
      output += d;
      onData(String(d));
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('exit', (code) => {
      if (code === 0) return resolve();
      const errors = output
        .split('\n')
        .filter((l) => /error TS\d+/.test(l))
        .join('\n');
      reject(new Error(`the build failed:\n${errors || output.slice(-4000)}`));
    });
  });
}

/** One JSON line of the runner in a service's log, so runs can be told apart in the file. */
function runnerLine(file, msg, extra = {}) {
  const line = { level: 30, time: new Date().toISOString(), service: 'pnpm-start', ...extra, msg };
  fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/**
 * The process helper of @chain/testkit, loaded once the build is done (its dist is part of the
 * build): `import('@chain/testkit').startProcess`.
 * @type {typeof import('@chain/testkit').startProcess}
 */
let startProcess;

/**
 * The CONFIG_DIR of a service: config/local/<service> (security on), and with --mtls
 * config/local/mtls/<service> (with --dpop config/local/dpop/<service>) over it, file by file,
 * copied together into .run/config/<service> (a service reads one override folder). The bundled config only when neither applies.
 */
function configDirOf(name) {
  const folders = [
    !securityOff && path.join(root, 'config', 'local', name),
    mtls && path.join(root, 'config', 'local', 'mtls', name),
    dpop && path.join(root, 'config', 'local', 'dpop', name),
    exchange &&
      !securityOff &&
      path.join(root, 'config', 'local', 'exchange', mtls ? 'mtls' : dpop ? 'dpop' : '', name),
  ].filter((dir) => dir && fs.existsSync(dir));
  if (folders.length === 0) return noOverride;
  if (folders.length === 1) return folders[0];
  const merged = path.join(root, '.run', 'config', name);
  fs.rmSync(merged, { recursive: true, force: true });
  for (const dir of folders) fs.cpSync(dir, merged, { recursive: true });
  return merged;
}

async function start({ name }) {
  const logFile = path.join(logs, `${name}.log`);
  const modes = [securityOff && 'security off', ...bindingModes].filter(Boolean);
  runnerLine(logFile, `starting ${name}${modes.length ? ` (${modes.join(', ')})` : ''}`);
  const proc = await startProcess(name, path.join(root, 'services', name, 'dist', 'index.js'), {
    env: {
      CERTS_DIR: certs,
      CONFIG_DIR: configDirOf(name),
    },
    nodeArgs: SERVICE_NODE_FLAGS,
    // Read by line until the service listens, then piped into the file unread: a service logs
    // a line per verified request, which the runner has no reason to look at.
    logFile,
  });
  running.push({ name, proc });
  runnerLine(logFile, `${name} started`, { pid: proc.pid });
  void proc.exited.then((code) => {
    if (stopping) return;
    if (code === 0) {
      console.log(`\n${name} stopped (exit 0); see .run/logs/${name}.log`);
    } else {
      const how =
        code === null ? `was killed (${proc.child.signalCode})` : `exited with code ${code}`;
      console.error(`\n${name} ${how}; see .run/logs/${name}.log`);
    }
    void stopAll(code === 0 ? 0 : 1);
  });
}

async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  if (running.length) console.log('\nstopping…');
  // Each log file is closed with every line the service wrote before it exited.
  await Promise.all(running.reverse().map(({ proc }) => proc.stop().then(() => proc.logClosed)));
  if (running.length) console.log('all services stopped');
  process.exit(exitCode);
}

/** What --mtls and --dpop switch on, as the runner says it. */
const bindingModes = [
  mtls && 'two-way TLS',
  mtls && !securityOff && 'certificate-bound tokens',
  dpop && !securityOff && 'DPoP-bound tokens',
  exchange && !securityOff && 'token exchange at every hop',
].filter(Boolean);

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

async function main() {
  if (mtls && dpop) {
    throw new Error(
      '--mtls and --dpop each choose what the tokens are bound to: the certificate or a DPoP key; pass one',
    );
  }
  if (!process.argv.includes('--no-build')) {
    console.log(
      'building (tsc -b and the bundles; the first build takes about a minute, later ones seconds)',
    );
    await build();
  }
  ({ startProcess } = await import('@chain/testkit'));
  const modes = bindingModes.map((m) => `, ${m}`).join('');
  console.log(
    `starting the chain (security ${securityOff ? 'off' : 'on'}${modes}); logs in .run/logs/`,
  );
  for (const svc of services) {
    await start(svc);
    console.log(`  ✓ ${svc.name.padEnd(12)} ${svc.urls.join('  ')}`);
  }
  const relative = (file) => path.relative(process.cwd(), file) || file;
  // With --mtls every curl line presents the user's client certificate (key and certificate
  // in one PEM file). The token server asks for one without requiring it; chain-user
  // authenticates by its secret and gets a Bearer token, not bound to the certificate.
  const cacert = `--cacert ${relative(path.join(certs, 'ca.crt'))}`;
  const tls = mtls
    ? `${cacert} --cert ${relative(path.join(certs, 'clients', 'client.pem'))}`
    : cacert;
  console.log('\nTry it:');
  if (securityOff) {
    console.log(`  curl ${tls} https://localhost:7441/v1/data`);
    console.log(`  curl ${tls} https://localhost:8443/v2/pet/1`);
  } else {
    console.log(
      `  TOKEN=$(curl -s ${tls} -u chain-user:chain-user-secret \\\n` +
        `      -d grant_type=client_credentials -d 'scope=api_a.r read:pets' \\\n` +
        `      https://localhost:6882/oauth2/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
    );
    console.log(`  curl ${tls} -H "Authorization: Bearer $TOKEN" https://localhost:7441/v1/data`);
    console.log(`  curl ${tls} -H "Authorization: Bearer $TOKEN" https://localhost:8443/v2/pet/1`);
    console.log(`  curl ${tls} -i https://localhost:7441/v1/data     # no token: 401 ERR10002`);
  }
  if (mtls) {
    console.log(
      `  curl ${cacert} https://localhost:7441/v1/data     # no client certificate: a TLS alert, no answer`,
    );
  }
  console.log('\nCtrl-C stops everything.');
}

main().catch((err) => {
  console.error(`\ncannot start: ${err.message}`);
  void stopAll(1);
});
