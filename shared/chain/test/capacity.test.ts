import type { Call } from '@polkadot/types/interfaces';
import { Queue } from 'bullmq';
import { Registry } from 'prom-client';
import { waitUntil } from '@frequency-gateway/devstack';
import {
  CapacityLimitError,
  CapacityMonitor,
  CapacitySubmitter,
  NonceManager,
  TransactionTracker,
  loadProviderKey,
  parseCapacityLimit,
  type ChainConnection,
} from '../src/index.js';
import { sendFinalized, startTestStack, tick, type TestStack } from './support/stack.js';

describe('CAPACITY_LIMIT', () => {
  it('reads one limit or a service and a total limit, and names what is wrong', () => {
    expect(parseCapacityLimit('{"type":"percentage","value":80}')).toEqual({
      service: { type: 'percentage', value: 80n },
    });
    expect(
      parseCapacityLimit(
        '{"serviceLimit":{"type":"amount","value":"1000000"},"totalLimit":{"type":"percentage","value":90}}',
      ),
    ).toEqual({ service: { type: 'amount', value: 1_000_000n }, total: { type: 'percentage', value: 90n } });
    expect(() => parseCapacityLimit('{"type":"percentage","value":120}')).toThrow('at most 100');
    expect(() => parseCapacityLimit('{"type":"share","value":1}')).toThrow(CapacityLimitError);
    expect(() => parseCapacityLimit('nope')).toThrow('is not JSON');
  });
});

describe('capacity monitor', () => {
  let stack: TestStack;
  let chain: ChainConnection;
  const redis = () => stack.redis();
  beforeAll(async () => {
    stack = await startTestStack();
    chain = stack.chain;
  });
  afterAll(async () => stack?.close());

  it('pauses the queue when the service limit is reached and resumes it at the next epoch', async () => {
    const alice = await loadProviderKey('//Alice');
    // Short epochs, so the next one comes within the test.
    await sendFinalized(chain.api.tx.sudo.sudo(chain.api.tx.capacity.setEpochLength(6)), alice);
    const queue = new Queue('publish', { connection: redis(), prefix: 'cm:bull' });
    const metrics = new Registry();
    const monitor = new CapacityMonitor({
      api: chain.api,
      redis: redis(),
      providerId: 1,
      limits: parseCapacityLimit('{"type":"amount","value":"400000"}'),
      prefix: 'cm',
      service: 'content-publishing',
      pausable: [queue],
      metrics,
    });
    const tracker = new TransactionTracker(chain.api, redis(), {
      prefix: 'cm',
      onOutcome: (outcome) => monitor.recordOutcome(outcome),
    });
    const submitter = new CapacitySubmitter(
      chain.api,
      alice,
      new NonceManager(redis(), chain.api, alice.address, { prefix: 'cm' }),
    );
    try {
      await monitor.start();
      expect(monitor.current()?.available).toBe(true);
      // What the Capacity alerts divide: remaining out of what the stake issues per epoch.
      const issued = await metrics.getSingleMetricAsString('gateway_capacity_total_issued');
      expect(issued).toContain(`gateway_capacity_total_issued ${monitor.current()!.totalIssued}`);
      expect(monitor.current()!.totalIssued).toBeGreaterThan(0n);
      expect(await queue.isPaused()).toBe(false);

      const call = chain.api.tx.messages.addIpfsMessage(
        17,
        'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
        1,
      ).method as Call;
      await submitter.submit([call], (tx) => tracker.record(tx, ['job']));
      // Until the tracker has seen the transaction in a block and the monitor counts what it cost.
      const state = await waitUntil(
        async () => {
          await tracker.scanOnce();
          const checked = await monitor.check();
          return checked.usedByService > 0n && checked;
        },
        10_000,
        'the capacity used by the transaction',
      );
      expect(state.usedByService).toBeGreaterThan(400_000n);
      expect(state.reason).toBe('service limit reached');
      expect(await queue.isPaused()).toBe(true);
      expect(await metrics.getSingleMetricAsString('gateway_capacity_paused')).toContain('gateway_capacity_paused 1');

      // Blocks pass until the epoch changes; the monitor notices by itself and resumes the queue.
      for (let i = 0; i < 8 && (await queue.isPaused()); i++) {
        await tick(chain, 1);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await queue.isPaused()).toBe(false);
      expect(monitor.current()?.usedByService).toBe(0n);
    } finally {
      monitor.close();
      await queue.close();
    }
  }, 60_000);
});
