import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { RpcError, methodNotFound } from './errors.js';
import type { RpcMethods, SubscriptionSpec } from './methods.js';

interface Request {
  jsonrpc?: string;
  id?: number | string | null;
  method?: unknown;
  params?: unknown;
}

export interface RpcServer {
  /** ws://host:port */
  url: string;
  /** http://host:port for one-shot POST calls */
  httpUrl: string;
  port: number;
  close(): Promise<void>;
}

export interface RpcServerOptions {
  port: number;
  host?: string;
  /** Called for errors that are bugs rather than bad requests. */
  onInternalError?: (error: unknown, method: string) => void;
}

function errorBody(error: unknown, method: string, options: RpcServerOptions) {
  if (error instanceof RpcError) {
    return { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
  }
  options.onInternalError?.(error, method);
  return { code: -32603, message: `Internal error: ${error instanceof Error ? error.message : String(error)}` };
}

/**
 * Serves the RPC methods as a Substrate node does: JSON-RPC 2.0 over WebSocket (with subscriptions and their
 * notification methods) and over HTTP POST (one-shot calls only), on one port.
 */
export async function serveRpc(methods: RpcMethods, options: RpcServerOptions): Promise<RpcServer> {
  const bySubscribe = new Map<string, SubscriptionSpec>();
  const byUnsubscribe = new Map<string, SubscriptionSpec>();
  for (const spec of methods.subscriptions) {
    for (const name of [spec.subscribe, ...(spec.aliases?.subscribe ?? [])]) bySubscribe.set(name, spec);
    for (const name of [spec.unsubscribe, ...(spec.aliases?.unsubscribe ?? [])]) byUnsubscribe.set(name, spec);
  }

  const call = async (request: Request, connection?: { socket: WebSocket; subscriptions: Map<string, () => void> }) => {
    const method = String(request.method);
    const params = Array.isArray(request.params) ? (request.params as unknown[]) : [];
    const reply = (body: Record<string, unknown>) => ({ jsonrpc: '2.0', id: request.id ?? null, ...body });
    try {
      const handler = methods.handlers[method];
      if (handler) return reply({ result: (await handler(params)) ?? null });
      const subscribe = bySubscribe.get(method);
      if (subscribe && connection) {
        const id = randomBytes(8).toString('hex');
        const notify = (result: unknown) => {
          if (connection.socket.readyState !== connection.socket.OPEN) return;
          connection.socket.send(
            JSON.stringify({ jsonrpc: '2.0', method: subscribe.notification, params: { subscription: id, result } }),
          );
        };
        // The id must reach the client before the first notification does.
        let ready = false;
        const early: unknown[] = [];
        connection.subscriptions.set(
          id,
          subscribe.start((result) => (ready ? notify(result) : early.push(result)), params),
        );
        setImmediate(() => {
          ready = true;
          for (const result of early.splice(0)) notify(result);
        });
        return reply({ result: id });
      }
      const unsubscribe = byUnsubscribe.get(method);
      if (unsubscribe && connection) {
        const stop = connection.subscriptions.get(String(params[0]));
        stop?.();
        connection.subscriptions.delete(String(params[0]));
        return reply({ result: stop !== undefined });
      }
      if (subscribe || unsubscribe) throw new RpcError(-32601, `${method} needs a WebSocket connection`);
      throw methodNotFound(method);
    } catch (error) {
      return reply({ error: errorBody(error, method, options) });
    }
  };

  const parse = (text: string): Request | Request[] | undefined => {
    try {
      return JSON.parse(text) as Request | Request[];
    } catch {
      return undefined;
    }
  };
  const answer = async (text: string, connection?: Parameters<typeof call>[1]) => {
    const request = parse(text);
    if (request === undefined) return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    return Array.isArray(request)
      ? Promise.all(request.map((one) => call(one, connection)))
      : call(request, connection);
  };

  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/health' || path === '/health/readiness')) {
      // A node's health endpoints on the RPC port: system_health as JSON, and readiness as a bare 200 (a
      // development node wants no peers, so it is always ready once it serves).
      const health = methods.handlers.system_health?.([]);
      if (path === '/health') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(health));
      else res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      void answer(body).then((result) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(result));
      });
    });
  });
  const sockets = new WebSocketServer({ server: http, maxPayload: 16 * 1024 * 1024 });
  sockets.on('connection', (socket) => {
    const connection = { socket, subscriptions: new Map<string, () => void>() };
    socket.on('message', (data) => {
      void answer(data.toString(), connection).then((result) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(result));
      });
    });
    socket.on('close', () => {
      for (const stop of connection.subscriptions.values()) stop();
      connection.subscriptions.clear();
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `ws://${shownHost}:${port}`,
    httpUrl: `http://${shownHost}:${port}`,
    port,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
