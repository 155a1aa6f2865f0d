// `helm test`'s Pods, rendered by a real Helm, then run: each Pod's own command (node with the rendered script and
// environment) against a loopback server that plays an api (not ready at first, then right or wrong answers), and
// against a real content-watcher api process with a real Redis.
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { startComponentProcess, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { COMPONENTS } from '@frequency-gateway/tools/components';
import { chartHelm, hooksOf, named, PREFIX, REQUIRED } from './chartRendering.js';
import { podSpec, type K8sObject } from './support/kubernetesObjects.js';

const { render } = chartHelm();

const testPods = (objects: K8sObject[]) => hooksOf(objects, 'test').filter((o) => o.kind === 'Pod');

/** A test Pod's container as a process: its command and arguments, its rendered variables with `env` over them. */
function runTestPod(pod: K8sObject, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const [container] = podSpec(pod).containers;
  const [command, ...commandArgs] = container!.command!;
  expect(command).toBe('node');
  const rendered = Object.fromEntries(
    (container!.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]),
  );
  const child = spawn(process.execPath, [...commandArgs, ...container!.args!], {
    env: { PATH: process.env.PATH, ...rendered, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('helm test', () => {
  it('has a Pod per api: the gateway image, no service account token, its api reached through the Service', async () => {
    const objects = await render({ ...REQUIRED, contentPublishing: { enabled: false } });
    const pods = testPods(objects);
    const apis = COMPONENTS.filter((c) => c.role === 'api' && c.service !== 'content-publishing');
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(apis.map((c) => `${PREFIX}-${c.name}-test`).sort());
    const image = podSpec(named(objects, 'Deployment', `${PREFIX}-account-api`)!).containers[0]!.image;
    for (const pod of pods) {
      const spec = podSpec(pod);
      expect(spec).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false });
      expect(spec.containers[0]!.image).toBe(image);
      const url = new URL(spec.containers[0]!.env!.find((e) => e.name === 'API_URL')!.value!);
      const service = named(objects, 'Service', url.hostname)!;
      expect(service.spec.ports[0].port).toBe(Number(url.port || 80));
      expect(pod.metadata.name).toBe(`${url.hostname}-test`);
    }
    expect(testPods(await render({ ...REQUIRED, tests: { enabled: false } }))).toEqual([]);
  });

  describe('a test Pod run against a loopback stand-in of its api', () => {
    let server: Server;
    let url: string;
    let readyAfter: number;
    let answer: { status: number; body: string };
    const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.push({ path: req.url!, headers: req.headers });
        const ready = req.url === '/readyz' && --readyAfter < 0;
        const [status, body] =
          req.url === '/readyz' ? [ready ? 200 : 503, ready ? 'ready' : 'redis is down'] : [answer.status, answer.body];
        res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));
    beforeEach(() => (seen.length = 0));

    it('waits for /readyz, then passes on the expected answer and fails on another, saying what it saw', async () => {
      const objects = await render({ ...REQUIRED, apiTokens: { enabled: true } });
      const pod = named(objects, 'Pod', `${PREFIX}-content-watcher-api-test`)!;
      readyAfter = 2;
      answer = { status: 200, body: '{"status":200,"registeredWebhooks":[]}' };
      const passed = await runTestPod(pod, {
        API_URL: url,
        API_TOKENS: 'first:first-token-0123456789, second:second-token-0123456789',
      });
      expect(passed.code).toBe(0);
      expect(passed.output).toContain(`GET ${url}/v1/webhooks: 200 {"status":200,"registeredWebhooks":[]}`);
      expect(seen.map((s) => s.path)).toEqual(['/readyz', '/readyz', '/readyz', '/v1/webhooks']);
      expect(seen.at(-1)!.headers.authorization).toBe('Bearer first-token-0123456789');

      answer = { status: 401, body: '{"message":"a bearer token is required"}' };
      const failed = await runTestPod(pod, { API_URL: url });
      expect(failed.code).toBe(1);
      expect(failed.output).toContain('expected 200 with "registeredWebhooks" in the body');
      expect(seen.at(-1)!.headers.authorization).toBeUndefined();
    }, 60_000);

    it('fails when the api never gets ready within its time', async () => {
      const pod = named(
        await render({ ...REQUIRED, tests: { readyWithinSeconds: 1 } }),
        'Pod',
        `${PREFIX}-account-api-test`,
      )!;
      readyAfter = 1_000;
      const { code, output } = await runTestPod(pod, { API_URL: url });
      expect(code).toBe(1);
      expect(output).toContain(`GET ${url}/readyz: 503 redis is down`);
      expect(seen.some((s) => s.path === '/v1/frequency/blockinfo')).toBe(false);
    }, 60_000);
  });

  describe('the content-watcher test Pod run against a real content-watcher api', () => {
    let redis: LocalRedis;
    let watcher: ComponentProcess;
    beforeAll(async () => {
      redis = await startRedisServer();
      watcher = await startComponentProcess('content-watcher', 'api', {
        REDIS_URL: redis.url,
        ENVIRONMENT: 'production',
        QUEUES_BASIC_AUTH: 'admin:board-password',
      });
    }, 120_000);
    afterAll(async () => {
      await watcher?.stop();
      await redis?.stop();
    });

    it('passes', async () => {
      const pod = named(await render(REQUIRED), 'Pod', `${PREFIX}-content-watcher-api-test`)!;
      const { code, output } = await runTestPod(pod, { API_URL: watcher.url });
      expect(output).toContain(`GET ${watcher.url}/v1/webhooks: 200`);
      expect(code).toBe(0);
    }, 60_000);
  });
});
