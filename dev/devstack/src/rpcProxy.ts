import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

/**
 * What a proxy does with what the node sends: `pass` it on; go `silent` (answers pass, subscription notifications
 * are dropped, as a node whose subscriptions stopped while its socket stays open); or be `stalled` (nothing
 * comes back, as a node that stopped answering).
 */
export type RpcProxyMode = 'pass' | 'silent' | 'stalled';

/** A WebSocket proxy on loopback in front of one node: a node of its own that tests can kill, bring back or mute. */
export interface RpcProxy {
  /** ws://127.0.0.1:<port>, the same across kill and revive. */
  readonly url: string;
  mode: RpcProxyMode;
  /** Client connections open now. */
  readonly connections: number;
  /** Drops every connection at once (no close handshake) and stops listening, as a node that died. */
  kill(): Promise<void>;
  /** Listens again on the same port. */
  revive(): Promise<void>;
  close(): Promise<void>;
}

const isNotification = (data: RawData): boolean => {
  try {
    const message = JSON.parse(data.toString()) as { method?: unknown; params?: { subscription?: unknown } };
    return typeof message.method === 'string' && message.params?.subscription !== undefined;
  } catch {
    return false;
  }
};

/** Starts a proxy to the node at `upstream` (ws://…) on a free loopback port. */
export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  const clients = new Set<WebSocket>();
  let server: WebSocketServer | undefined;
  let port = 0;
  const proxy = {
    url: '',
    mode: 'pass' as RpcProxyMode,
    get connections() {
      return clients.size;
    },
    async kill() {
      for (const client of clients) client.terminate();
      clients.clear();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    },
    revive: () => listen(),
    close: () => proxy.kill(),
  };

  const serve = (client: WebSocket) => {
    clients.add(client);
    const node = new WebSocket(upstream);
    const waiting: RawData[] = [];
    client.on('message', (data, binary) => {
      if (node.readyState === WebSocket.OPEN) node.send(data, { binary });
      else waiting.push(data);
    });
    node.on('open', () => {
      for (const data of waiting.splice(0)) node.send(data, { binary: false });
    });
    node.on('message', (data, binary) => {
      if (proxy.mode === 'stalled' || (proxy.mode === 'silent' && isNotification(data))) return;
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
    });
    const end = () => {
      clients.delete(client);
      client.terminate();
      node.terminate();
    };
    client.on('close', end);
    client.on('error', end);
    node.on('close', end);
    node.on('error', end);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = new WebSocketServer({ host: '127.0.0.1', port });
      next.once('listening', () => {
        port = (next.address() as AddressInfo).port;
        proxy.url = `ws://127.0.0.1:${port}`;
        server = next;
        resolve();
      });
      next.once('error', reject);
      next.on('connection', serve);
    });
  await listen();
  return proxy;
}
