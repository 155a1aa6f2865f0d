import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { parseCid } from './hash.js';
import type { ContentStore } from './contentStore.js';

export interface GatewayServer {
  /** e.g. http://127.0.0.1:8080; content is at `${url}/ipfs/{cid}`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A read-only HTTP gateway over a content store (`GET|HEAD /ipfs/{cid}`), so that the URLs the gateway puts in
 * announcements work when the embedded store stands in for an IPFS node.
 */
export async function serveGateway(
  store: ContentStore,
  options: { port?: number; host?: string } = {},
): Promise<GatewayServer> {
  const server: Server = createServer((request, response) => {
    void (async () => {
      const match = /^\/ipfs\/([^/?#]+)\/?(?:[?#].*)?$/.exec(request.url ?? '');
      if ((request.method !== 'GET' && request.method !== 'HEAD') || !match) {
        response.writeHead(request.method === 'GET' || request.method === 'HEAD' ? 404 : 405).end();
        return;
      }
      const cid = parseCid(decodeURIComponent(match[1] as string));
      if (!cid) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('invalid CID\n');
        return;
      }
      const stat = await store.stat(cid.toString());
      if (!stat) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      response.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(stat.size),
        // Content never changes under its CID.
        'cache-control': 'public, max-age=29030400, immutable',
        etag: `"${stat.cid}"`,
        'x-ipfs-path': `/ipfs/${stat.cid}`,
      });
      if (request.method === 'HEAD') {
        response.end();
        return;
      }
      await pipeline(Readable.from(store.read(stat.cid)), response);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
