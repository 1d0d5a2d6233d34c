import fs from 'node:fs';
import net from 'node:net';
import {
  freePort,
  httpsOutcome,
  httpsRequest,
  postForm,
  serveHttps,
  tokenEndpointStub,
  type HttpsServer,
} from '../src/index.js';

describe('freePort', () => {
  it('is a loopback port nothing listens on, which a server can then take', async () => {
    const port = await freePort();
    // Below the kernel's range for outgoing connections (Linux: 32768-60999 unless changed).
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
    expect(port).toBeGreaterThanOrEqual(1024);
    expect(port).toBeLessThan(Number(low));
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });

  it('is not a port a server already listens on', async () => {
    const taken = new Set<number>();
    const servers: net.Server[] = [];
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(taken.has(port)).toBe(false);
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      servers.push(server);
      taken.add(port);
    }
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });
});

describe('serveHttps and the request helpers', () => {
  let server: HttpsServer;
  const seen: { method?: string; type?: string; body: string }[] = [];
  beforeAll(async () => {
    server = await serveHttps((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, type: req.headers['content-type'], body });
        if (req.url === '/hang') return; // never answers
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ url: req.url }));
      });
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    seen.splice(0);
  });

  it('serves HTTPS as localhost with the development certificate, trusted by httpsRequest', async () => {
    expect(server.url).toBe(`https://localhost:${server.port}`);
    const answer = await httpsRequest(`${server.url}/a?b=1`);
    expect({ status: answer.status, body: answer.body, text: answer.text }).toEqual({
      status: 200,
      body: { url: '/a?b=1' },
      text: '{"url":"/a?b=1"}',
    });
  });

  it('postForm sends a urlencoded form and returns the whole answer', async () => {
    const answer = await postForm(`${server.url}/oauth2/token`, { grant_type: 'x', scope: 'a b' });
    expect(answer.status).toBe(200);
    expect(seen).toEqual([
      {
        method: 'POST',
        type: 'application/x-www-form-urlencoded',
        body: 'grant_type=x&scope=a+b',
      },
    ]);
  });

  it('httpsOutcome: the status and text, or the error code and no answer', async () => {
    expect(await httpsOutcome(`${server.url}/x`)).toEqual({ status: 200, body: '{"url":"/x"}' });
    expect(await httpsOutcome(`${server.url}/hang`, { timeoutMs: 100 })).toEqual({
      error: 'TIMEOUT',
    });
    const closed = await freePort();
    expect(await httpsOutcome(`https://localhost:${closed}/`)).toEqual({ error: 'ECONNREFUSED' });
  });
});

describe('tokenEndpointStub', () => {
  it("answers every request with the next token as light-oauth2's token endpoint does", async () => {
    let n = 0;
    const stub = await tokenEndpointStub(() => `token-${++n}`);
    try {
      const first = await postForm(`${stub.url}/oauth2/token`, {
        grant_type: 'client_credentials',
      });
      const second = await httpsRequest(`${stub.url}/anything`);
      expect([first.body, second.body]).toEqual([
        { access_token: 'token-1', token_type: 'bearer', expires_in: 600 },
        { access_token: 'token-2', token_type: 'bearer', expires_in: 600 },
      ]);
      expect(stub.requests).toHaveLength(2);
    } finally {
      await stub.close();
    }
  });
});
