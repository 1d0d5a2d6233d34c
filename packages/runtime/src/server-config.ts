import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import tls from 'node:tls';
import { configFile, text, z, type Light4jKey } from '@chain/config';

/** The two hosts the request pipeline runs on (server.yml `framework`). */
export const FRAMEWORKS = ['native', 'express'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/**
 * server.yml: light-4j's keys that this project implements, plus `keyFile`/`certFile` (PEM) and
 * ours (`framework`, the header size and the time-outs). docs/configuration.md lists them all.
 */
export interface ServerConfig {
  serviceId: string;
  ip: string;
  httpsPort: number;
  enableHttps: boolean;
  httpPort: number;
  /** As light-4j: with enableHttps true, no HTTP listener is opened whatever this says. */
  enableHttp: boolean;
  /** PEM private key and certificate of the HTTPS listener (absolute paths). */
  keyFile?: string;
  certFile?: string;
  /** light-4j: a PKCS12 keystore holding the key and certificate, used without keyFile/certFile. */
  keystoreName?: string;
  keystorePass?: string;
  /**
   * light-4j: two-way (mutual) TLS on the HTTPS port. A client must present a certificate that
   * chains to `truststoreName`; one without, or with another, gets a TLS alert and no answer.
   */
  enableTwoWayTls: boolean;
  /**
   * light-4j's trust store of the client certificates, here a PEM file of CA certificates
   * (absolute path); set only with enableTwoWayTls.
   */
  truststoreName?: string;
  /**
   * Ours: a second listener (same protocol, key and certificate, no client certificate asked)
   * that serves only `/health` and `/ready`, for probes that cannot present a certificate.
   */
  probePort?: number;
  /**
   * light-4j: serve HTTP/2 on the HTTPS port, with HTTP/1.1 for clients that do not offer it
   * (ALPN). The native host only: the Express host serves HTTP/1.1. Off by default (light-4j's
   * is on): HTTP/1.1 keep-alive was as fast or faster in the same bench runs, and HTTP/1.1
   * clients cost more CPU through the HTTP/2 server's fallback (docs/benchmarks.md).
   */
  enableHttp2: boolean;
  /** The host of the request pipeline: Node's own objects (fast) or an Express application. */
  framework: Framework;
  /** Largest request header block in bytes; a larger one is answered 431. */
  maxHeaderSize: number;
  /** Time for a client to send the request headers (Node's `headersTimeout`); then 408. */
  headersTimeoutMs: number;
  /** Time for a client to send the whole request (Node's `requestTimeout`); then 408. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (Node's `keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** Longest wait for in-flight requests on SIGTERM (light-4j's `shutdownGracefulPeriod`). */
  shutdownTimeoutMs: number;
  /**
   * Processes that serve the port (node:cluster): 1 (default) serves from this process; more
   * fork that many workers behind a primary that serves nothing; `auto` is one per core.
   */
  workers: number;
}

/** The most workers server.yml may ask for. */
export const MAX_WORKERS = 64;

/** server.yml `workers`: a whole number from 1 to MAX_WORKERS, or `auto` (one per core). */
const workers = z.unknown().transform((value, ctx) => {
  if (value === 'auto') return Math.min(os.availableParallelism(), MAX_WORKERS);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_WORKERS) {
    return value;
  }
  ctx.addIssue({
    code: 'custom',
    message: `must be a whole number from 1 to ${MAX_WORKERS}, or "auto" (one per core); got ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

const port = z.number().int().min(0).max(65535);
const ms = z.number().int().min(1).max(3_600_000);

const notHere = (note: string): Light4jKey => ({ note });

/** light-4j's server.yml keys this project does not implement. */
const LIGHT4J_KEYS: Record<string, Light4jKey> = {
  keyPass: notHere('a PKCS12 keystore is opened with keystorePass'),
  truststorePass: notHere('the trust store is a PEM file, read without a password'),
  bootstrapStoreName: notHere('no config server'),
  bootstrapStorePass: notHere('no config server'),
  enableRegistry: { same: false },
  startOnRegistryFailure: { same: false },
  dynamicPort: { same: false, note: 'port 0 picks a free port' },
  minPort: notHere('used with dynamicPort only'),
  maxPort: notHere('used with dynamicPort only'),
  environment: notHere('no service registry'),
  buildNumber: notHere('not reported'),
  serviceName: notHere('serviceId names the service'),
  bufferSize: notHere('Node sizes its own buffers'),
  ioThreads: notHere('one event loop per process; workers sets the processes'),
  workerThreads: notHere('one event loop per process; workers sets the processes'),
  backlog: notHere("Node's default backlog"),
  alwaysSetDate: { same: false },
  serverString: notHere('no Server header is sent'),
  shutdownTimeout: notHere('shutdownTimeoutMs bounds the shutdown'),
  allowUnescapedCharactersInUrl: { same: false },
  maxTransferFileSize: notHere('no uploads here'),
  maskConfigProperties: { same: true },
};

/** JKS files start with 0xFEEDFEED. */
const JKS_MAGIC = 0xfeedfeed;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Why a trust store cannot check client certificates, or undefined when it can. */
function truststoreProblem(file: string): string | undefined {
  const bytes = fs.readFileSync(file);
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC) {
    return `${file} is a JKS trust store; export its CA certificates as PEM (keytool -exportcert -rfc)`;
  }
  const blocks = bytes.toString('latin1').match(PEM_CERTIFICATE);
  if (!blocks) {
    return `${file} is not a PEM file of CA certificates (a PKCS12 trust store? export it with openssl pkcs12 -nokeys)`;
  }
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      return `${file} holds a certificate that cannot be read`;
    }
  }
  return undefined;
}

/** Why a keystore cannot serve HTTPS, or undefined when it can. */
function keystoreProblem(file: string, passphrase: string | undefined): string | undefined {
  const bytes = fs.readFileSync(file);
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC) {
    return `${file} is a JKS keystore; convert it to PKCS12 (keytool -importkeystore -deststoretype pkcs12) or give keyFile and certFile`;
  }
  try {
    tls.createSecureContext({ pfx: bytes, passphrase });
    return undefined;
  } catch {
    return `${file} cannot be opened as a PKCS12 keystore with keystorePass`;
  }
}

export const serverConfigSchema = configFile<ServerConfig>(
  ({ file, warn }) =>
    z
      .strictObject({
        serviceId: z.string().min(1),
        ip: z.string().default('0.0.0.0'),
        httpsPort: port.default(8443),
        enableHttps: z.boolean().default(true),
        httpPort: port.default(8080),
        enableHttp: z.boolean().default(false),
        keyFile: file().optional(),
        certFile: file().optional(),
        keystoreName: z.string().optional(),
        keystorePass: text().optional(),
        enableTwoWayTls: z.boolean().default(false),
        truststoreName: z.string().optional(),
        probePort: port.optional(),
        enableHttp2: z.boolean().default(false),
        framework: z.enum(FRAMEWORKS).default('native'),
        maxHeaderSize: z
          .number()
          .int()
          .min(1024)
          .max(16 * 1024 * 1024)
          .default(128 * 1024),
        headersTimeoutMs: ms.default(20_000),
        requestTimeoutMs: ms.default(30_000),
        keepAliveTimeoutMs: ms.default(72_000),
        shutdownTimeoutMs: z.number().int().min(0).default(10000),
        workers: workers.default(1),
      })
      .superRefine((cfg, ctx) => {
        if (cfg.headersTimeoutMs > cfg.requestTimeoutMs) {
          ctx.addIssue({
            code: 'custom',
            path: ['headersTimeoutMs'],
            message: 'must not be longer than requestTimeoutMs',
          });
        }
        if (cfg.enableTwoWayTls && !cfg.enableHttps) {
          ctx.addIssue({
            code: 'custom',
            path: ['enableTwoWayTls'],
            message: 'needs enableHttps: two-way TLS is a way of serving HTTPS',
          });
        }
        if (cfg.enableTwoWayTls && !cfg.truststoreName) {
          ctx.addIssue({
            code: 'custom',
            path: ['truststoreName'],
            message:
              'is required with enableTwoWayTls: the PEM file of the CA certificates that a client certificate must chain to',
          });
        }
        const mainPort = cfg.enableHttps ? cfg.httpsPort : cfg.httpPort;
        if (cfg.probePort !== undefined && cfg.probePort !== 0 && cfg.probePort === mainPort) {
          ctx.addIssue({
            code: 'custom',
            path: ['probePort'],
            message: `must not be the port of the service itself (${cfg.enableHttps ? 'httpsPort' : 'httpPort'})`,
          });
        }
        if (!cfg.enableHttps) return;
        if (cfg.keyFile && cfg.certFile) return;
        if (!cfg.keyFile && !cfg.certFile && cfg.keystoreName) return;
        for (const key of ['keyFile', 'certFile'] as const) {
          if (!cfg[key]) {
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: 'is required with enableHttps (or give keystoreName, a PKCS12 keystore)',
            });
          }
        }
      })
      .transform((cfg, ctx) => {
        const out = { ...cfg };
        if (cfg.keystoreName && !(cfg.keyFile && cfg.certFile) && cfg.enableHttps) {
          const store = file().safeParse(cfg.keystoreName);
          const problem = store.success
            ? keystoreProblem(store.data, cfg.keystorePass)
            : store.error.issues[0].message;
          if (problem) {
            ctx.addIssue({ code: 'custom', path: ['keystoreName'], message: problem });
            return z.NEVER;
          }
          out.keystoreName = store.data;
        } else {
          if (cfg.keystoreName && cfg.enableHttps) {
            warn('keystoreName', 'ignored: keyFile and certFile serve HTTPS');
          }
          delete out.keystoreName;
          delete out.keystorePass;
        }
        if (cfg.enableTwoWayTls) {
          const store = file().safeParse(cfg.truststoreName);
          const problem = store.success
            ? truststoreProblem(store.data)
            : store.error.issues[0].message;
          if (problem) {
            ctx.addIssue({ code: 'custom', path: ['truststoreName'], message: problem });
            return z.NEVER;
          }
          out.truststoreName = store.data;
        } else {
          if (cfg.truststoreName) warn('truststoreName', 'ignored: enableTwoWayTls is false');
          delete out.truststoreName;
        }
        if (cfg.enableHttps && cfg.enableHttp) {
          warn('enableHttp', 'ignored: with enableHttps true only HTTPS is served (as light-4j)');
          out.enableHttp = false;
        }
        return out;
      }),
  {
    light4j: LIGHT4J_KEYS,
    aliases: { shutdownGracefulPeriod: 'shutdownTimeoutMs' },
  },
);
