import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const COMPONENTS = {
  'account-api': { port: 3013, queues: ['transactionPublish', 'webhookQueue'] },
  'account-worker': { port: 3023 },
  'content-publishing-api': {
    port: 3010,
    queues: ['assetQueue', 'requestQueue', 'batchQueue', 'publishQueue', 'webhookQueue'],
  },
  'content-publishing-worker': { port: 3020 },
  'content-watcher-api': {
    port: 3011,
    queues: ['watcherRequestQueue', 'watcherContentIpfsQueue', 'watcherDeliveryQueue'],
  },
  'content-watcher-worker': { port: 3021 },
} as Record<string, { port: number; queues?: string[] }>;

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer().once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });

async function freeOffset(): Promise<number> {
  for (;;) {
    // Below the kernel's ephemeral range (32768 and up), where the free ports other suites pick come from: a
    // port checked free here cannot be taken by another test's process before the component binds it.
    const offset = 10_000 + Math.floor(Math.random() * 12_000);
    const ports = [...Object.values(COMPONENTS).map(({ port }) => port), 9944, 8080];
    const free = await Promise.all(ports.map((port) => portIsFree(port + offset)));
    if (free.every(Boolean)) return offset;
  }
}

type Operation = { parameters?: unknown[]; requestBody?: unknown; responses: Record<string, { content?: object }> };

/**
 * What a component's OpenAPI document leaves out of what it answers: a 400 for an operation that takes input
 * (validation answers it), a 431 anywhere (Node answers it for long headers), server-sent events whose schema is
 * not one event (an object whose `data` is a string), as generic OpenAPI 3.1 tools read an event stream.
 */
async function undocumentedAnswers(base: string): Promise<string[]> {
  const document = (await (await fetch(`${base}/docs/swagger.json`)).json()) as {
    paths: Record<string, Record<string, Operation>>;
    components?: { schemas?: Record<string, { properties?: { data?: { type?: string } } }> };
  };
  const resolve = (schema?: { $ref?: string; properties?: { data?: { type?: string } } }) =>
    schema?.$ref ? document.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, { parameters, requestBody, responses }]) => {
      const missing = [...(parameters?.length || requestBody ? ['400'] : []), '431'].filter((s) => !responses[s]);
      const events = Object.values(responses).flatMap(({ content }) =>
        Object.entries(content ?? {}).filter(([type]) => type.startsWith('text/event-stream')),
      );
      const mistyped = events.filter(
        ([, media]) => resolve((media as { schema?: { $ref?: string } }).schema)?.properties?.data?.type !== 'string',
      );
      return [...missing, ...mistyped.map(([type]) => type)].map((what) => `${method} ${path}: ${what}`);
    }),
  );
}

describe('make dev', () => {
  it('brings up six ready components with metrics, docs and queue boards, and stops them all on Ctrl-C', async () => {
    const offset = await freeOffset();
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const env = { ...process.env };
    delete env.REDIS_URL;
    delete env.FREQUENCY_API_WS_URL;
    delete env.OUTBOUND_ALLOWED_DESTINATIONS;
    delete env.OUTBOUND_POLICY;
    const runner = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', 'tools/src/dev.ts', '--port-offset', String(offset)],
      {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const output: string[] = [];
    const exited = new Promise<number | null>((resolve) => runner.once('exit', resolve));
    const up = new Promise<void>((resolve, reject) => {
      createInterface({ input: runner.stdout! }).on('line', (line) => {
        output.push(line);
        if (line.includes('The gateway is up')) resolve();
        // "not ready after N s: …; still waiting" is a progress line on a loaded machine; "not ready: …" is the end.
        if (line.includes('not ready:')) reject(new Error(line));
      });
      void exited.then((code) => reject(new Error(`dev runner exited (${code}): ${output.slice(-10).join('\n')}`)));
    });
    try {
      await up;
      for (const [name, { port, queues }] of Object.entries(COMPONENTS)) {
        const base = `http://127.0.0.1:${port + offset}`;
        expect([name, (await fetch(`${base}/readyz`)).status]).toEqual([name, 200]);
        const health = (await (await fetch(`${base}/healthz`)).json()) as { component: string };
        expect(health.component).toBe(name);
        expect(await (await fetch(`${base}/metrics`)).text()).toContain(
          `process_cpu_seconds_total{component="${name}"}`,
        );
        const swagger = await fetch(`${base}/docs/swagger/`);
        expect([name, swagger.status]).toEqual([name, 200]);
        expect([name, await undocumentedAnswers(base)]).toEqual([name, []]);
        const board = await fetch(`${base}/queues/api/queues`);
        if (queues) {
          const listed = ((await board.json()) as { queues: { name: string }[] }).queues.map((q) => q.name);
          expect(listed.sort()).toEqual([...queues].sort());
        } else {
          expect([name, board.status]).toEqual([name, 404]);
        }
      }
      expect(output.join('\n')).toContain(`http://localhost:${3013 + offset}/docs/swagger`);
      const chain = await fetch(`http://127.0.0.1:${9944 + offset}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'system_chain', params: [] }),
      });
      expect(await chain.json()).toMatchObject({ result: 'Frequency Development (No Relay)' });

      // Receivers of a developer run on this machine: make dev opens the loopback interface (and says so).
      expect(output.join('\n')).toContain('webhooks may go to public addresses and 127.0.0.0/8,::1,localhost');
      const watcher = `http://127.0.0.1:${3011 + offset}`;
      const receiverUrl = 'http://127.0.0.1:9/receiver';
      const registered = await fetch(`${watcher}/v1/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiverUrl, announcementTypes: ['broadcast'] }),
      });
      expect(registered.status).toBe(201);
      const removed = await fetch(`${watcher}/v1/webhooks?url=${encodeURIComponent(receiverUrl)}`, {
        method: 'DELETE',
      });
      expect(removed.status).toBe(200);
    } finally {
      runner.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(output.join('\n')).toContain('stopped.');
    for (const { port } of Object.values(COMPONENTS)) expect(await portIsFree(port + offset)).toBe(true);
  }, 300_000);
});
