import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

/**
 * What a proxy does with what the node sends: `pass` it on; go `silent` (answers pass, subscription notifications
 * are dropped, as a node whose subscriptions stopped while its socket stays open); be `busy` (notifications pass,
 * answers are held back, as a node too busy to answer that still sends its heads); or be `stalled` (nothing
 * comes back, as a node that stopped answering).
 */
export type RpcProxyMode = 'pass' | 'silent' | 'busy' | 'stalled';

/** A WebSocket proxy on loopback in front of one node: a node of its own that tests can kill, bring back or mute. */
export interface RpcProxy {
  /** ws://127.0.0.1:<port>, the same across kill and revive. */
  readonly url: string;
  mode: RpcProxyMode;
  /** Client connections open now. */
  readonly connections: number;
  /** Answers held back in `busy` mode, by the method asked. */
  heldAnswers(method: string): number;
  /** Drops every connection at once (no close handshake) and stops listening, as a node that died. */
  kill(): Promise<void>;
  /** Listens again on the same port. */
  revive(): Promise<void>;
  close(): Promise<void>;
}

interface Message {
  id?: unknown;
  method?: unknown;
  params?: { subscription?: unknown };
}

const parse = (data: RawData): Message => {
  try {
    return JSON.parse(data.toString()) as Message;
  } catch {
    return {};
  }
};

const isNotification = (message: Message): boolean =>
  typeof message.method === 'string' && message.params?.subscription !== undefined;

/** Starts a proxy to the node at `upstream` (ws://…) on a free loopback port. */
export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  const clients = new Set<WebSocket>();
  let server: WebSocketServer | undefined;
  let port = 0;
  const held = new Map<string, number>();
  const proxy = {
    url: '',
    mode: 'pass' as RpcProxyMode,
    get connections() {
      return clients.size;
    },
    heldAnswers: (method: string) => held.get(method) ?? 0,
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
    const asked = new Map<unknown, string>();
    client.on('message', (data, binary) => {
      const request = parse(data);
      if (typeof request.method === 'string') asked.set(request.id, request.method);
      if (node.readyState === WebSocket.OPEN) node.send(data, { binary });
      else waiting.push(data);
    });
    node.on('open', () => {
      for (const data of waiting.splice(0)) node.send(data, { binary: false });
    });
    node.on('message', (data, binary) => {
      if (proxy.mode === 'stalled') return;
      const message = parse(data);
      const notification = isNotification(message);
      const method = notification ? undefined : asked.get(message.id);
      asked.delete(message.id);
      if (proxy.mode === 'silent' && notification) return;
      if (proxy.mode === 'busy' && method !== undefined) {
        held.set(method, (held.get(method) ?? 0) + 1);
        return;
      }
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
