import crypto from 'node:crypto';
import type https from 'node:https';
import os from 'node:os';
import tls from 'node:tls';
import {
  configFile,
  mustPass,
  readConfigFile,
  text,
  z,
  type Light4jKey,
  type SchemaHelpers,
} from '@chain/config';

export const FRAMEWORKS = ['native', 'express'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

const MAX_WORKERS = 64;

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

/** The transform drops what another key makes unused, with a warning. */
const serverSchema = ({ file, path, warn }: SchemaHelpers) =>
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
      keystoreName: path().optional(),
      keystorePass: text().optional(),
      enableTwoWayTls: z.boolean().default(false),
      truststoreName: path().optional(),
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
      const problem = (key: string, message: string) =>
        ctx.addIssue({ code: 'custom', path: [key], message });
      if (cfg.headersTimeoutMs > cfg.requestTimeoutMs) {
        problem('headersTimeoutMs', 'must not be longer than requestTimeoutMs');
      }
      if (cfg.enableTwoWayTls && !cfg.enableHttps) {
        problem('enableTwoWayTls', 'needs enableHttps: two-way TLS is a way of serving HTTPS');
      }
      if (cfg.enableTwoWayTls && !cfg.truststoreName) {
        problem(
          'truststoreName',
          'is required with enableTwoWayTls: the PEM file of the CA certificates that a client certificate must chain to',
        );
      }
      const main = cfg.enableHttps ? 'httpsPort' : 'httpPort';
      if (cfg.probePort !== undefined && cfg.probePort !== 0 && cfg.probePort === cfg[main]) {
        problem('probePort', `must not be the port of the service itself (${main})`);
      }
      const pem = cfg.keyFile && cfg.certFile;
      const keystore = cfg.keystoreName && !cfg.keyFile && !cfg.certFile;
      if (!cfg.enableHttps || pem || keystore) return;
      for (const key of ['keyFile', 'certFile'] as const) {
        if (!cfg[key]) {
          problem(key, 'is required with enableHttps (or give keystoreName, a PKCS12 keystore)');
        }
      }
    })
    .transform((cfg, ctx) => {
      const out: typeof cfg & { tls?: TlsMaterial } = { ...cfg };
      if (!cfg.enableHttps || (cfg.keyFile && cfg.certFile)) {
        if (cfg.keystoreName && cfg.enableHttps) {
          warn('keystoreName', 'ignored: keyFile and certFile serve HTTPS');
        }
        delete out.keystoreName;
        delete out.keystorePass;
      }
      if (!cfg.enableTwoWayTls) {
        if (cfg.truststoreName) warn('truststoreName', 'ignored: enableTwoWayTls is false');
        delete out.truststoreName;
      }
      if (cfg.enableHttps && cfg.enableHttp) {
        warn('enableHttp', 'ignored: with enableHttps true only HTTPS is served (as light-4j)');
        out.enableHttp = false;
      }
      if (out.enableHttps) out.tls = tlsMaterial(out, ctx);
      return out;
    });

export type TlsMaterial = ({ key: Buffer; cert: Buffer } | { pfx: Buffer; passphrase?: string }) &
  Pick<https.ServerOptions, 'requestCert' | 'rejectUnauthorized' | 'ca'>;

const JKS_MAGIC = 0xfeedfeed;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const isJks = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC;

/** The files of HTTPS, read once; each failure names the file and the key, never OpenSSL's code. */
function tlsMaterial(
  cfg: Partial<Record<'keyFile' | 'certFile' | 'keystoreName' | 'keystorePass', string>> & {
    truststoreName?: string;
  },
  ctx: z.RefinementCtx,
): TlsMaterial | undefined {
  const { keyFile, certFile, keystoreName, keystorePass, truststoreName } = cfg;
  let material: TlsMaterial | undefined;
  if (keystoreName) {
    material = readConfigFile(ctx, ['keystoreName'], keystoreName, (pfx) => {
      if (isJks(pfx)) {
        throw new Error(
          `${keystoreName} is a JKS keystore; convert it to PKCS12 (keytool -importkeystore -deststoretype pkcs12) or give keyFile and certFile`,
        );
      }
      const opened = { pfx, passphrase: keystorePass };
      mustPass(`${keystoreName} cannot be opened as a PKCS12 keystore with keystorePass`, () =>
        tls.createSecureContext(opened),
      );
      return opened;
    });
  } else {
    const key = readConfigFile(ctx, ['keyFile'], keyFile!, (bytes) => {
      mustPass('is not a PEM private key (or it is encrypted)', () =>
        crypto.createPrivateKey(bytes),
      );
      return bytes;
    });
    const cert =
      key &&
      readConfigFile(ctx, ['certFile'], certFile!, (bytes) => {
        mustPass('is not a PEM certificate', () => new crypto.X509Certificate(bytes));
        return bytes;
      });
    if (!key || !cert) return undefined;
    try {
      tls.createSecureContext({ key, cert });
      material = { key, cert };
    } catch {
      const message = 'is not the private key of the certificate in certFile';
      ctx.addIssue({ code: 'custom', path: ['keyFile'], message });
    }
  }
  if (!material || !truststoreName) return material;
  const ca = readConfigFile(ctx, ['truststoreName'], truststoreName, (bytes) => {
    if (isJks(bytes)) {
      throw new Error(
        `${truststoreName} is a JKS trust store; export its CA certificates as PEM (keytool -exportcert -rfc)`,
      );
    }
    const blocks = bytes.toString('latin1').match(PEM_CERTIFICATE);
    if (!blocks) {
      throw new Error(
        `${truststoreName} is not a PEM file of CA certificates (a PKCS12 trust store? export it with openssl pkcs12 -nokeys)`,
      );
    }
    for (const block of blocks) {
      mustPass(
        `${truststoreName} holds a certificate that cannot be read`,
        () => new crypto.X509Certificate(block),
      );
    }
    return bytes;
  });
  // OpenSSL verifies the chain, the validity dates and the client-auth purpose.
  return ca && { ...material, requestCert: true, rejectUnauthorized: true, ca };
}

export type ServerConfig = z.output<ReturnType<typeof serverSchema>>;

export const serverConfigSchema = configFile(serverSchema, {
  light4j: LIGHT4J_KEYS,
  aliases: { shutdownGracefulPeriod: 'shutdownTimeoutMs' },
});
