import { z, type SchemaFactory } from '@chain/config';

/** server.yml (DESIGN.md "Running a service"). */
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
  /** Longest wait for in-flight requests on SIGTERM before connections are cut (ours). */
  shutdownTimeoutMs: number;
}

const port = z.number().int().min(0).max(65535);

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
      shutdownTimeoutMs: z.number().int().min(0).default(10000),
    })
    .superRefine((cfg, ctx) => {
      if (!cfg.enableHttps) return;
      for (const key of ['keyFile', 'certFile'] as const) {
        if (!cfg[key])
          ctx.addIssue({ code: 'custom', path: [key], message: 'is required with enableHttps' });
      }
    });
