import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /**
   * Stops accepting connections at once, lets requests in flight finish, and closes idle keep-alive
   * connections; connections still busy after `graceMs` are cut.
   */
  close(graceMs: number): Promise<void>;
}

export async function listen(app: Express, port: number, host = '0.0.0.0'): Promise<RunningServer> {
  const server = createServer(app);
  // Slightly above typical load balancer idle timeouts, so that the balancer closes first.
  server.keepAliveTimeout = 65_000;
  let closing = false;
  const active = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    active.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      active.delete(res);
      // A keep-alive connection becomes idle once its response is done; while stopping, close it then.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve()));
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => (clearTimeout(force), resolve()));
        server.closeIdleConnections();
      }),
  };
}
