// The webhook receiver of the e2e suites. It runs where the gateway's components can reach it and nothing else is
// needed: a Pod of the gateway image in the cluster suites (this file from a ConfigMap), a container of the gateway
// image on the run's Docker network, or a local process next to local components. It answers 200 to every request,
// keeps each one, and gives them back in arrival order on GET /received?from=N. PORT (default 8080) and HOST
// (default every address) say where it listens. With RECEIVED_FILE set, each request is appended to that file
// before it is answered and the file is read back at start, so that a receiver stopped and started again (the
// e2e fault "webhook receiver down") still has everything it acknowledged, as a real receiver's store would.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const store = process.env.RECEIVED_FILE;
const received =
  store && existsSync(store)
    ? readFileSync(store, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line))
    : [];

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
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const delivery = {
      at: Date.now(),
      method: request.method,
      path: url.pathname,
      headers: request.headers,
      raw: Buffer.concat(chunks).toString('utf8'),
    };
    if (store) appendFileSync(store, `${JSON.stringify(delivery)}\n`);
    received.push(delivery);
    response.writeHead(200).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? '8080'), process.env.HOST);
// Nothing to finish: stop at once when the pod is deleted.
process.on('SIGTERM', () => process.exit(0));
