import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface ReceivedWebhook {
  path: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: unknown;
  raw: string;
  /** Date.now() when the request arrived. */
  at: number;
}

/** An answer with headers, e.g. `{status: 429, headers: {'retry-after': '1'}}`. */
export interface WebhookAnswer {
  status: number;
  headers?: Record<string, string>;
}

export type WebhookResponder = number | WebhookAnswer | ((received: ReceivedWebhook) => number | WebhookAnswer);

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every POST so far, in order of arrival. */
  received: ReceivedWebhook[];
  /** How to answer from now on (200 until told otherwise). */
  respondWith(answer: WebhookResponder): void;
  /** Resolves once `count` POSTs have arrived; rejects after `timeoutMs` (default 10 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Closes the port and every open connection: the receiver is down. */
  stop(): Promise<void>;
  /** Listens again on the same port after stop. */
  start(): Promise<void>;
}

function flatHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function parsedBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A local HTTP server that records every POST, for tests of webhook senders (down, failing, slow receivers). */
export async function startWebhookReceiver(options: { port?: number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  let responder: WebhookResponder = 200;

  const server = createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const webhook = { path: request.url ?? '/', headers: flatHeaders(request), body: parsedBody(raw), raw, at };
      received.push(webhook);
      const chosen = typeof responder === 'function' ? responder(webhook) : responder;
      const answer = typeof chosen === 'number' ? { status: chosen } : chosen;
      response.writeHead(answer.status, answer.headers).end();
      for (const wake of waiters) wake();
    });
  });

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(options.port ?? 0);

  const waitFor = (count: number, timeoutMs = 10_000) =>
    new Promise<ReceivedWebhook[]>((resolve, reject) => {
      const check = () => {
        if (received.length < count) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(received.slice());
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`webhook receiver got ${received.length} of ${count} POSTs within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    respondWith: (answer) => {
      responder = answer;
    },
    waitFor,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
    start: async () => {
      if (!server.listening) await listen(port);
    },
  };
}
