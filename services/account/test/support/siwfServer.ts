import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SiwfResponse } from '@projectlibertylabs/siwf';

/** A local stand-in for the SIWF service's code exchange (`GET /api/payload?authorizationCode=…`). */
export interface SiwfServer {
  /** Base URL (http://127.0.0.1:port), the `endpoint` the siwf library and the account service are given. */
  url: string;
  /** Stores a response and returns a fresh authorization code for it. */
  issue(response: SiwfResponse): string;
  /** How many times each code has been fetched. */
  fetches(code: string): number;
  stop(): Promise<void>;
}

/**
 * Serves the responses it was given: 200 with the JSON response for a code it issued, 404 for any other code or
 * path. Codes can be fetched more than once.
 */
export async function startSiwfServer(): Promise<SiwfServer> {
  const responses = new Map<string, SiwfResponse>();
  const counts = new Map<string, number>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const code = url.searchParams.get('authorizationCode') ?? '';
    const body = url.pathname === '/api/payload' ? responses.get(code) : undefined;
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
    } else if (body === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
    } else {
      counts.set(code, (counts.get(code) ?? 0) + 1);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    issue: (response) => {
      const code = randomUUID();
      responses.set(code, structuredClone(response));
      return code;
    },
    fetches: (code) => counts.get(code) ?? 0,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
