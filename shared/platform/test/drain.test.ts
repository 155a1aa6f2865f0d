import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import express from 'express';
import { waitUntil } from '@frequency-gateway/devstack';
import { closeAfterAnswer, listen, type RunningServer } from '../src/index.js';

/** A GET on a keep-alive agent: the status and the Connection header of the answer, or the error's code. */
function get(agent: Agent, url: string): Promise<{ status: number; connection: string | undefined } | string> {
  return new Promise((resolve) => {
    request(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
    })
      .on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)))
      .end();
  });
}

describe('the HTTP server stopping with a drain (SHUTDOWN_DRAIN_MS)', () => {
  let http: RunningServer;
  let agent: Agent;
  beforeEach(async () => {
    const app = express();
    app.get('/ok', (_req, res) => res.json({ ok: true }));
    // Refused before its body is read, as an upload at a limit is: the connection lingers a minute for the client.
    app.post('/refuse', (req, res) => {
      closeAfterAnswer(req, 60_000);
      res.status(413).set('connection', 'close').json({ refused: true });
    });
    http = await listen(app, 0, '127.0.0.1');
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  const clients: Socket[] = [];
  afterEach(() => {
    agent.destroy();
    for (const client of clients.splice(0)) client.destroy();
  });

  it('answers a request on a kept-alive connection with Connection: close, then stops once the client left', async () => {
    expect(await get(agent, `${http.url}/ok`)).toEqual({ status: 200, connection: 'keep-alive' });
    const started = Date.now();
    const closed = http.close(10_000, 5_000);
    // The idle kept-alive connection is still served, and told to close.
    expect(await get(agent, `${http.url}/ok`)).toEqual({ status: 200, connection: 'close' });
    await closed;
    // It stopped when the client's connection closed, well before the drain's 5 s.
    expect(Date.now() - started).toBeLessThan(2_000);
    // New connections are refused once it stopped.
    expect(await get(agent, `${http.url}/ok`)).toBe('ECONNREFUSED');
  });

  it('without a drain, closes the idle kept-alive connection at once', async () => {
    expect(await get(agent, `${http.url}/ok`)).toEqual({ status: 200, connection: 'keep-alive' });
    await http.close(10_000);
    expect(await get(agent, `${http.url}/ok`)).not.toEqual(expect.objectContaining({ status: 200 }));
  });

  /** A client that sends a refused request's headers and the start of its body, and leaves the connection open. */
  async function refusedClient(): Promise<{ socket: Socket; answered: Promise<string> }> {
    // Half-open allowed: seeing our side end, it does not close its own (a client still sending does not).
    const socket = connect({ port: http.port, host: '127.0.0.1', allowHalfOpen: true });
    await once(socket, 'connect');
    let text = '';
    const answered = new Promise<string>((resolve) =>
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()).includes('"refused"') && resolve(text)),
    );
    clients.push(socket);
    return { socket, answered };
  }
  const sendRefused = (socket: Socket) =>
    socket.write('POST /refuse HTTP/1.1\r\nHost: gateway\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');

  it('does not wait for a connection lingering after its answer: it is closed when the stop begins', async () => {
    const client = await refusedClient();
    sendRefused(client.socket);
    expect(await client.answered).toMatch(/^HTTP\/1.1 413/);
    let stopped = false;
    void http.close(60_000, 60_000).then(() => (stopped = true));
    await waitUntil(async () => stopped, 10_000, 'the server stopped, not after the minute of lingering');
  });

  it('closes a connection that begins to linger during the drain once its answer is out', async () => {
    const client = await refusedClient();
    let stopped = false;
    // The connection is open when the drain begins, so the drain waits for it.
    void http.close(60_000, 60_000).then(() => (stopped = true));
    sendRefused(client.socket);
    expect(await client.answered).toMatch(/^HTTP\/1.1 413/);
    await waitUntil(async () => stopped, 10_000, 'the server stopped, not after the minute of lingering');
  });
});
