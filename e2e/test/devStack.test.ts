import { DEV_PORTS, portIsFree, startDevRunner, type DevComponent } from '../src/devRunner.js';

const COMPONENTS: Record<DevComponent, { queues?: string[] }> = {
  'account-api': { queues: ['transactionPublish', 'webhookQueue'] },
  'account-worker': {},
  'content-publishing-api': {
    queues: ['assetQueue', 'requestQueue', 'batchQueue', 'publishQueue', 'webhookQueue'],
  },
  'content-publishing-worker': {},
  'content-watcher-api': {
    queues: ['watcherRequestQueue', 'watcherContentIpfsQueue', 'watcherDeliveryQueue'],
  },
  'content-watcher-worker': {},
};

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
    const runner = await startDevRunner();
    const { offset, output, exited } = runner;
    try {
      await runner.up;
      for (const [name, { queues }] of Object.entries(COMPONENTS) as [DevComponent, { queues?: string[] }][]) {
        const base = runner.base(name);
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
      const watcher = runner.base('content-watcher-api');
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
      runner.interrupt();
    }
    expect(await exited).toBe(0);
    expect(output.join('\n')).toContain('stopped.');
    for (const name of Object.keys(COMPONENTS) as DevComponent[])
      expect(await portIsFree(DEV_PORTS[name] + offset)).toBe(true);
  }, 300_000);
});
