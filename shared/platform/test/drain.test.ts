import { Agent, request } from 'node:http';
import express from 'express';
import { listen, type RunningServer } from '../src/index.js';

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
    http = await listen(app, 0, '127.0.0.1');
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterEach(() => agent.destroy());

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
});
