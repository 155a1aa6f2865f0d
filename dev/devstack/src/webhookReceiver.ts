// The tests' one webhook receiver. It imports nothing but Node's own modules, so that `webhookReceiverProgram()`
// can hand the same code, as one JavaScript file, to a container or a Pod of the gateway image.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  method: string;
  path: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: unknown;
  raw: string;
  /** Date.now() when the request arrived. */
  at: number;
}

/** An answer with headers and a body, e.g. `{status: 429, headers: {'retry-after': '1'}}`. */
export interface WebhookAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export type WebhookResponder = number | WebhookAnswer | ((received: ReceivedWebhook) => number | WebhookAnswer);

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request so far, in order of arrival. */
  received: ReceivedWebhook[];
  /** How to answer from now on (200 until told otherwise). */
  respondWith(answer: WebhookResponder): void;
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (default 10 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Closes the port and every open connection: the receiver is down (what it got is kept). */
  stop(): Promise<void>;
  /** Listens again on the same port after stop. */
  start(): Promise<void>;
}

export interface WebhookReceiverOptions {
  port?: number;
  /** Where it listens: 127.0.0.1 unless told otherwise; '' for every address (in a container or a Pod). */
  host?: string;
  /**
   * A file each request is appended to before it is answered, read back at start: a receiver process stopped and
   * started again still has everything it acknowledged, as a real receiver's store would.
   */
  storeFile?: string;
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

function storedRequests(file: string | undefined): ReceivedWebhook[] {
  if (!file || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ReceivedWebhook);
}

/**
 * An HTTP server that records every request (webhooks, and what a stand-in for another service is asked), for
 * tests of senders (down, failing, slow receivers). Who cannot read `received` (the receiver runs in a container
 * or a Pod) reads `GET /received?from=N` ({total, deliveries}); `GET /healthz` answers once it listens.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const received = storedRequests(options.storeFile);
  const waiters = new Set<() => void>();
  let responder: WebhookResponder = 200;

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://receiver');
    if (request.method === 'GET' && url.pathname === '/received') {
      const from = Number(url.searchParams.get('from') ?? '0');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ total: received.length, deliveries: received.slice(from) }));
      return;
    }
    if (request.method === 'GET' && url.pathname === '/healthz') {
      response.writeHead(200).end('ok');
      return;
    }
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = flatHeaders(request);
      const path = request.url ?? '/';
      const webhook = { method: request.method ?? 'GET', path, headers, body: parsedBody(raw), raw, at };
      if (options.storeFile) appendFileSync(options.storeFile, `${JSON.stringify(webhook)}\n`);
      received.push(webhook);
      const chosen = typeof responder === 'function' ? responder(webhook) : responder;
      const answer = typeof chosen === 'number' ? { status: chosen } : chosen;
      response.writeHead(answer.status, answer.headers).end(answer.body);
      for (const wake of waiters) wake();
    });
  });
  // Longer than a sender keeps an idle connection: the receiver never closes one the sender is about to reuse.
  server.keepAliveTimeout = 65_000;

  const host = options.host ?? '127.0.0.1';
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host || undefined, () => {
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
        reject(new Error(`webhook receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    url: `http://${host || '127.0.0.1'}:${port}`,
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
