import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDevchain, type DevchainProcess } from '@frequency-gateway/devchain';
import { freePort, holdsFor, startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import {
  startComponentProcess,
  type ComponentProcess,
  type Role,
  type Service,
} from '@frequency-gateway/devstack/gateway';

/** Every component that talks to the chain. */
const CHAIN_USERS: [Service, Role][] = [
  ['account', 'api'],
  ['account', 'worker'],
  ['content-publishing', 'api'],
  ['content-publishing', 'worker'],
  ['content-watcher', 'worker'],
];

type Readiness = { status: string; checks: Record<string, { status: string; error?: string }> };
const readiness = async (component: ComponentProcess) => {
  const response = await fetch(`${component.url}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness };
};

describe('components started while the chain is unreachable', () => {
  let redis: LocalRedis;
  let chain: DevchainProcess | undefined;
  let ipfsDir: string;
  const components: ComponentProcess[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    ipfsDir = mkdtempSync(join(tmpdir(), 'chain-unreachable-ipfs-'));
  });
  afterAll(async () => {
    await Promise.all(components.map((component) => component.stop('SIGKILL')));
    await chain?.stop();
    await redis.stop();
    rmSync(ipfsDir, { recursive: true, force: true });
  });

  it('stay up and unready, say why once, and become ready by themselves when the chain answers', async () => {
    const chainPort = await freePort();
    const env = {
      REDIS_URL: redis.url,
      FREQUENCY_API_WS_URL: `ws://127.0.0.1:${chainPort}`,
      PROVIDER_ID: '1',
      PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
      IPFS_EMBEDDED_DIR: ipfsDir,
      SIWF_V2_URL: 'http://127.0.0.1:9/siwa',
      READINESS_INTERVAL_MS: '500',
      LOG_LEVEL: 'info',
    };
    components.push(
      ...(await Promise.all(CHAIN_USERS.map(([service, role]) => startComponentProcess(service, role, env)))),
    );

    // Nothing listens on the chain's port: for 30 s every component stays alive and reports why it is not ready.
    await holdsFor(
      30_000,
      async () => {
        for (const component of components) {
          expect([component.name, component.running()]).toEqual([component.name, true]);
          expect([component.name, (await fetch(`${component.url}/livez`)).status]).toEqual([component.name, 200]);
          const { status, body } = await readiness(component);
          expect([component.name, status]).toEqual([component.name, 503]);
          expect(body.checks.chain?.status).not.toBe('up');
        }
      },
      500,
    );
    for (const component of components) {
      const { body } = await readiness(component);
      expect([component.name, body.checks.chain]).toEqual([
        component.name,
        expect.objectContaining({
          status: 'down',
          error: `not connected to the chain at 127.0.0.1:${chainPort}: connect ECONNREFUSED 127.0.0.1:${chainPort}`,
        }),
      ]);
      // One line says it, however many times the connection was retried; nothing else was printed bare.
      const told = component.lines().filter((line) => String(line.msg).includes('is not reachable'));
      expect([component.name, told]).toEqual([
        component.name,
        [expect.objectContaining({ level: 'warn', chain: `127.0.0.1:${chainPort}`, reason: expect.any(String) })],
      ]);
      expect([component.name, component.lines().filter((line) => 'text' in line)]).toEqual([component.name, []]);
    }

    chain = await spawnDevchain({ port: chainPort });
    const ready = await Promise.all(
      components.map(async (component) => {
        const startedWaiting = Date.now();
        await waitUntil(
          async () => (await readiness(component)).status === 200,
          90_000,
          `${component.name} to be ready after the chain came up`,
          250,
        );
        return `${component.name} ${((Date.now() - startedWaiting) / 1000).toFixed(1)} s`;
      }),
    );
    process.stdout.write(`ready after the chain came up: ${ready.join(', ')}\n`);
    for (const component of components) {
      expect([component.name, component.running()]).toEqual([component.name, true]);
      expect(component.lines().some((line) => line.msg === `connected to the chain at 127.0.0.1:${chainPort}`)).toBe(
        true,
      );
    }
    const exits = await Promise.all(components.map((component) => component.stop()));
    expect(exits).toEqual(components.map(() => ({ code: 0, signal: null })));
  }, 240_000);
});
