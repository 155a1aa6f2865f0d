import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  startWebhookReceiver,
  waitUntil,
  webhookReceiverProgram,
  type ReceivedWebhook,
} from '../src/index.js';

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-repeat': 'one' }, body });

const read = async (url: string) =>
  (await (await fetch(`${url}/received?from=0`)).json()) as { total: number; deliveries: ReceivedWebhook[] };

describe('the webhook receiver', () => {
  it('records each request, answers as told, and gives them back at GET /received', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const first = await post(`${receiver.url}/hooks/a`, '{"referenceId":"r1"}');
      expect(first.status).toBe(200);
      receiver.respondWith((request) =>
        request.path === '/hooks/b' ? { status: 429, headers: { 'retry-after': '1' } } : 500,
      );
      const second = await post(`${receiver.url}/hooks/b`, 'not json');
      expect([second.status, second.headers.get('retry-after')]).toEqual([429, '1']);
      expect((await post(`${receiver.url}/hooks/c`, '{}')).status).toBe(500);

      const got = await receiver.waitFor(3);
      expect(got.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
        { method: 'POST', path: '/hooks/a', body: { referenceId: 'r1' } },
        { method: 'POST', path: '/hooks/b', body: 'not json' },
        { method: 'POST', path: '/hooks/c', body: {} },
      ]);
      expect(got[0]!.headers['x-repeat']).toBe('one');
      expect(got[1]!.raw).toBe('not json');
      const served = await read(receiver.url);
      expect(served.total).toBe(3);
      expect(served.deliveries).toEqual(JSON.parse(JSON.stringify(got)));
      expect((await fetch(`${receiver.url}/healthz`)).status).toBe(200);
      await expect(receiver.waitFor(4, 200)).rejects.toThrow('got 3 of 4 requests within 200 ms');
    } finally {
      await receiver.stop();
    }
  });

  it('is down between stop and start, on the same port, and keeps what it got', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await post(receiver.url, '{"n":1}');
      await receiver.stop();
      await expect(post(receiver.url, '{"n":2}')).rejects.toThrow();
      await receiver.start();
      await post(receiver.url, '{"n":3}');
      expect(receiver.received.map((request) => request.body)).toEqual([{ n: 1 }, { n: 3 }]);
    } finally {
      await receiver.stop();
    }
  });

  it('runs as a program of its own (a container or a Pod runs it), keeping what it got in RECEIVED_FILE across a restart', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'receiver-program-'));
    const program = join(folder, 'receiver.mjs');
    writeFileSync(program, await webhookReceiverProgram());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      RECEIVED_FILE: join(folder, 'received.jsonl'),
    };
    const run = async () => {
      const child = spawn(process.execPath, [program], { env, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await waitUntil(async () => (await fetch(`${url}/healthz`)).ok, 20_000, 'the receiver program to answer');
      return async () => {
        child.kill('SIGTERM');
        await exited;
      };
    };
    try {
      let stop = await run();
      expect((await post(`${url}/account`, '{"referenceId":"before"}')).status).toBe(200);
      await stop();
      stop = await run();
      try {
        await post(`${url}/account`, '{"referenceId":"after"}');
        const served = await read(url);
        expect(served.deliveries.map(({ path, body }) => ({ path, body }))).toEqual([
          { path: '/account', body: { referenceId: 'before' } },
          { path: '/account', body: { referenceId: 'after' } },
        ]);
      } finally {
        await stop();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
