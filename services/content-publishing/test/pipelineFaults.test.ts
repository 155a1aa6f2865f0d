import { callJson, dsnpUsers } from '@frequency-gateway/devstack';
import { ChainQueries, loadProviderKey, NonceManager, SIGNING_KEYSPACE } from '@frequency-gateway/chain';
import { Redis } from 'ioredis';
import { Keyring } from '@polkadot/keyring';
import { asAlice, createOnChainIntent, FIRST_NEW_ID, grantIntents } from './support/chainSetup.js';
import { bestBlock, postBroadcasts, PUBLISHED, rowsOnChain } from './support/broadcasts.js';
import { metric, startPipeline, waitUntil, type PipelineStack } from './support/pipeline.js';
import { TEST_USERS } from './support/stack.js';

describe('publishing pipeline under faults', () => {
  let stack: PipelineStack;

  beforeAll(async () => {
    stack = await startPipeline({
      workerEnv: { BATCH_MAX_COUNT: '100', BATCH_INTERVAL_SECONDS: '2' },
      genesis: { users: [...dsnpUsers(TEST_USERS).users, { account: '//Dave' }] },
    });
  }, 180_000);
  afterAll(async () => stack?.stop());

  it('finalizes every request exactly once when the worker is killed (-9) mid-run and started again', async () => {
    const from = await bestBlock(stack);
    const ids = await postBroadcasts(stack, {
      msaId: 2,
      count: 1000,
      label: 'kill',
      at: 300,
      during: async () => {
        await stack.workers.shift()!.stop('SIGKILL');
        await stack.startWorker();
      },
    });
    const records = await stack.settled(ids, 150_000);
    expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
    const { rows, cids } = await rowsOnChain(stack, 2, from);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((row) => row.contentHash)).size).toBe(1000);
    // No batch file was announced twice.
    expect(new Set(cids).size).toBe(cids.length);
  }, 240_000);

  it('loses nothing when Redis (append-only) restarts mid-run', async () => {
    const from = await bestBlock(stack);
    const ids = await postBroadcasts(stack, {
      msaId: 3,
      count: 1000,
      label: 'redis',
      at: 300,
      during: async () => {
        await stack.redis.kill('SIGTERM');
        // Redis stays away until the api and the worker have noticed (their readiness says so), while the run goes on.
        await waitUntil(
          async () => {
            const answers = await Promise.all(
              [stack.api, ...stack.workers].map((component) => fetch(`${component.url}/readyz`)),
            );
            return answers.every((answer) => answer.status === 503);
          },
          30_000,
          'the api and the worker unready without Redis',
        );
        await stack.redis.restart();
      },
    });
    const records = await stack.settled(ids, 120_000);
    expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
    const { rows } = await rowsOnChain(stack, 3, from);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((row) => row.contentHash)).size).toBe(1000);
  }, 180_000);

  it('with two worker replicas closes each batch once and never reuses a nonce', async () => {
    const second = await stack.startWorker();
    const from = await bestBlock(stack);
    const ids = await postBroadcasts(stack, { msaId: 4, count: 1000, label: 'replicas' });
    const records = await stack.settled(ids, 120_000);
    expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
    const { rows, cids } = await rowsOnChain(stack, 4, from);
    expect(rows).toHaveLength(1000);
    expect(new Set(cids).size).toBe(cids.length);
    // Both replicas worked, and the node refused none of their transactions.
    const batched = await Promise.all(
      stack.workers.map((worker) => metric(worker.url, 'content_announcements_batched_total')),
    );
    expect(batched.every((count) => count > 0)).toBe(true);
    for (const worker of stack.workers)
      expect(await metric(worker.url, 'content_publish_transactions_total', 'outcome="refused"')).toBe(0);
    await second.stop();
    stack.workers.splice(stack.workers.indexOf(second), 1);
  }, 180_000);

  it('fails on-chain content whose delegation was revoked before publication, with the decoded reason', async () => {
    const { api } = stack.chain;
    await createOnChainIntent(api, 'test.faults');
    await grantIntents(api, '//Dave', [FIRST_NEW_ID]);
    const dave = (await new ChainQueries(api).msaIdOf((await loadProviderKey('//Dave')).address))!.toString();
    await Promise.all(stack.workers.splice(0).map((worker) => worker.stop()));
    const answer = await callJson(stack.api.url, 'POST', '/v3/content/on-chain', {
      schemaId: FIRST_NEW_ID,
      payload: '0x0c',
      published: PUBLISHED,
      msaId: dave,
    });
    expect(answer.status).toBe(202);
    const daveKey = new Keyring({ type: 'sr25519' }).addFromUri('//Dave');
    await new Promise<void>((resolve, reject) => {
      api.tx.msa
        .revokeDelegationByDelegator(1)
        .signAndSend(daveKey, (result) => {
          if (result.status.isFinalized) resolve();
        })
        .catch(reject);
    });
    await stack.startWorker();
    const [record] = await stack.settled([answer.body.referenceId], 60_000);
    expect(record).toMatchObject({
      state: 'failed',
      // Messages is pallet 61 of the runtime; UnAuthorizedDelegate the sixth of its errors.
      error: { module: 'Messages', name: 'UnAuthorizedDelegate', index: 61, code: 5 },
    });
  }, 120_000);

  it('waits while the service has spent its Capacity, and completes after the epoch turns', async () => {
    const { api } = stack.chain;
    await asAlice(api.tx.sudo.sudo(api.tx.capacity.setEpochLength(20)));
    await Promise.all(stack.workers.splice(0).map((worker) => worker.stop()));
    // Any spending reaches this limit: after one transaction the service waits for the next epoch.
    const worker = await stack.startWorker({ CAPACITY_LIMIT: '{"type":"amount","value":1}' });
    const epoch = async () => (await api.query.capacity.currentEpoch()).toNumber();
    const [first] = await postBroadcasts(stack, { msaId: 5, count: 1, label: 'capacity first' });
    const [firstRecord] = await stack.settled([first!], 60_000);
    expect(firstRecord!.state).toBe('finalized');
    const spentIn = await epoch();
    await waitUntil(
      async () => {
        const health = (await (await fetch(`${worker.url}/healthz`)).json()) as {
          checks: Record<string, { status: string; error?: string }>;
        };
        return (
          health.checks.capacity?.status === 'down' && /service limit reached/.test(health.checks.capacity.error ?? '')
        );
      },
      10_000,
      'capacity shown as spent in /healthz',
    );
    expect(await metric(worker.url, 'gateway_capacity_paused')).toBe(1);

    const [second] = await postBroadcasts(stack, { msaId: 5, count: 1, label: 'capacity second' });
    // It is batched, but not submitted while the epoch lasts.
    await waitUntil(async () => (await stack.request(second!))?.state === 'batched', 20_000, 'second batched');
    if ((await epoch()) === spentIn) expect((await stack.request(second!))!.state).toBe('batched');
    const [secondRecord] = await stack.settled([second!], 60_000);
    expect(secondRecord!.state).toBe('finalized');
    const epochOf = async (block: number) =>
      (await (await api.at(await api.rpc.chain.getBlockHash(block))).query.capacity.currentEpoch()).toNumber();
    expect(await epochOf(secondRecord!.block!.number)).toBeGreaterThan(spentIn);
  }, 120_000);
});

describe("publishing on a chain that seals a block only when a transaction comes (as the Helm chart's devchain does)", () => {
  let stack: PipelineStack;

  beforeAll(async () => {
    stack = await startPipeline({ sealing: 'instant' });
  }, 180_000);
  afterAll(async () => stack?.stop());

  it('a nonce reserved by a worker killed before it submitted holds nothing back: the gap is filled, what waits behind it finalizes', async () => {
    // What a worker killed between reserving its nonce and submitting leaves: a nonce nobody will use. No block comes
    // without a transaction, so the era of those signed after it never ends: only filling the gap frees them.
    const alice = await loadProviderKey('//Alice');
    const redis = new Redis(stack.redis.url);
    const lost = await new NonceManager(redis, stack.chain.api, alice.address, { prefix: SIGNING_KEYSPACE })
      .reserve()
      .finally(() => redis.disconnect());
    const ids = await postBroadcasts(stack, { msaId: 2, count: 20, label: 'gap' });
    const records = await stack.settled(ids, 120_000);
    expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
    expect(await metric(stack.workers[0]!.url, 'chain_nonce_gaps_filled_total')).toBe(1);
    expect((await stack.chain.api.rpc.system.accountNextIndex(alice.address)).toNumber()).toBeGreaterThan(lost + 1);
  }, 180_000);
});
