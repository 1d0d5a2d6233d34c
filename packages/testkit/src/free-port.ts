import fs from 'node:fs';
import net from 'node:net';

/** The lowest port the kernel hands out for outgoing connections (Linux; 32768 elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(
      fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}
const LOW = ephemeralLow();
const FROM = Math.max(1024, LOW - 12000);

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on now, below the kernel's range for outgoing connections: a
 * server a test stops and starts again on it (InfluxDB, Redis, a token server) finds it still
 * free, as no connection made meanwhile can have been given it as its local port.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FROM + Math.floor(Math.random() * (LOW - FROM));
    if (await listens(port)) return port;
  }
  throw new Error(`no free loopback port in ${FROM}-${LOW - 1}`);
}
