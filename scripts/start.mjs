#!/usr/bin/env node
// The local run: starts the token/key server, the four chain services and the petstore as
// processes over HTTPS, security on (config/local/<service>), prints each URL and working curl
// lines, and stops everything on Ctrl-C. Logs go to .run/logs/<service>.log.
//   node scripts/start.mjs [--security off]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const certs = process.env.CERTS_DIR ?? path.join(root, 'certs');
const securityOff = process.argv.includes('--security') && process.argv.includes('off');
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

const children = [];
let stopping = false;

function start({ name }) {
  const configDir = path.join(root, 'config', 'local', name);
  const env = { ...process.env, CERTS_DIR: certs };
  if (!securityOff && fs.existsSync(configDir)) env.CONFIG_DIR = configDir;
  else env.CONFIG_DIR = noOverride;
  const out = fs.openSync(path.join(logs, `${name}.log`), 'w');
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist', 'index.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push({ name, child });
  return new Promise((resolve, reject) => {
    let stderr = '';
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 20 s`)), 20000);
    child.stderr.on('data', (d) => {
      stderr += d;
      fs.writeSync(out, d);
    });
    child.stdout.on('data', (d) => {
      fs.writeSync(out, d);
      buffer += d;
      if (/"msg":"listening on https/.test(buffer)) {
        clearTimeout(timer);
        buffer = '';
        resolve();
      } else if (buffer.length > 1e6) buffer = buffer.slice(-1000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!stopping) {
        reject(new Error(`${name} exited with code ${code}\n${stderr.trim()}`));
        if (children.length) {
          console.error(`\n${name} stopped unexpectedly (code ${code}); see .run/logs/${name}.log`);
          void stopAll(1);
        }
      }
    });
  });
}

async function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await Promise.all(
    children.reverse().map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', resolve);
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 12000).unref();
        }),
    ),
  );
  console.log('all services stopped');
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

console.log(`starting the chain (security ${securityOff ? 'off' : 'on'}); logs in .run/logs/`);
try {
  for (const svc of services) {
    await start(svc);
    console.log(`  ✓ ${svc.name.padEnd(12)} ${svc.urls.join('  ')}`);
  }
} catch (err) {
  console.error(`\ncannot start: ${err.message}`);
  await stopAll(1);
}

const ca = path.relative(process.cwd(), path.join(certs, 'ca.crt')) || 'certs/ca.crt';
console.log('\nTry it:');
if (securityOff) {
  console.log(`  curl --cacert ${ca} https://localhost:7441/v1/data`);
  console.log(`  curl --cacert ${ca} https://localhost:8443/v2/pet/1`);
} else {
  console.log(
    `  TOKEN=$(curl -s --cacert ${ca} -u chain-user:chain-user-secret \\\n` +
      `      -d grant_type=client_credentials -d 'scope=api_a.r read:pets' \\\n` +
      `      https://localhost:6882/oauth2/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
  );
  console.log(
    `  curl --cacert ${ca} -H "Authorization: Bearer $TOKEN" https://localhost:7441/v1/data`,
  );
  console.log(
    `  curl --cacert ${ca} -H "Authorization: Bearer $TOKEN" https://localhost:8443/v2/pet/1`,
  );
  console.log(
    `  curl --cacert ${ca} -i https://localhost:7441/v1/data     # no token: 401 ERR10002`,
  );
}
console.log('\nCtrl-C stops everything.');
