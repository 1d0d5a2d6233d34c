import { z, type SchemaFactory } from '@chain/config';

/** The two hosts the request pipeline runs on (server.yml `framework`). */
export const FRAMEWORKS = ['native', 'express'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** server.yml. The keys and defaults are documented in docs/configuration.md. */
export interface ServerConfig {
  serviceId: string;
  ip: string;
  httpsPort: number;
  enableHttps: boolean;
  httpPort: number;
  enableHttp: boolean;
  /** PEM private key and certificate of the HTTPS listener (absolute paths). */
  keyFile?: string;
  certFile?: string;
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
  /** Longest wait for in-flight requests on SIGTERM before connections are cut. */
  shutdownTimeoutMs: number;
}

const port = z.number().int().min(0).max(65535);
const ms = z.number().int().min(1).max(3_600_000);

export const serverConfigSchema: SchemaFactory<ServerConfig> = ({ file }) =>
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
    })
    .superRefine((cfg, ctx) => {
      if (cfg.headersTimeoutMs > cfg.requestTimeoutMs) {
        ctx.addIssue({
          code: 'custom',
          path: ['headersTimeoutMs'],
          message: 'must not be longer than requestTimeoutMs',
        });
      }
      if (!cfg.enableHttps) return;
      for (const key of ['keyFile', 'certFile'] as const) {
        if (!cfg[key])
          ctx.addIssue({ code: 'custom', path: [key], message: 'is required with enableHttps' });
      }
    });
