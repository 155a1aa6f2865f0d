import { RedisLeaseLock, StaleRunError, createLogger, runAsLeader } from '@frequency-gateway/platform';
import { jest } from '@jest/globals';
import type { Call } from '@polkadot/types/interfaces';
import { fastTiming, waitUntil } from '@frequency-gateway/devstack';
import { Registry } from 'prom-client';
import {
  CapacitySubmitter,
  ChainTiming,
  NonceManager,
  RecordTooLateError,
  ScanPositionMovedError,
  SubmissionError,
  TransactionSettledError,
  TransactionTracker,
  loadProviderKey,
  submissionError,
  alreadyImported,
  type ChainConnection,
  type TrackerOptions,
  type TransactionOutcome,
} from '../src/index.js';
import { startTestStack, tick, type TestStack } from './support/stack.js';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const FAST = fastTiming();

describe('capacity submission and transaction tracking', () => {
  let stack: TestStack;
  let chain: ChainConnection;
  let submitter: CapacitySubmitter;
  const redis = () => stack.redis();
  const outcomes: TransactionOutcome[] = [];
  const tracker = (prefix = 'gw', options: Partial<TrackerOptions> = {}) =>
    new TransactionTracker(chain.api, redis(), {
      prefix,
      onOutcome: async (outcome) => void outcomes.push(outcome),
      ...options,
    });
  /** How many abandoned transactions a tracker with `metrics` submitted again with `result` (all, without). */
  const resubmitted = async (metrics: Registry, result?: string) =>
    (await metrics.getSingleMetric('chain_transactions_resubmitted_total')!.get()).values
      .filter((value) => result === undefined || value.labels.result === result)
      .reduce((sum, value) => sum + value.value, 0);
  const ipfsMessage = (schemaId = 17) => chain.api.tx.messages.addIpfsMessage(schemaId, CID, 100).method as Call;
  /** A submitter of `seed`'s key, counting its nonces under `prefix`, on the eras of `timing` (4 blocks). */
  const submitterOf = async (seed: string, prefix: string, timing = FAST) => {
    const key = await loadProviderKey(seed);
    const nonces = new NonceManager(redis(), chain.api, key.address, { prefix });
    return new CapacitySubmitter(chain.api, key, nonces, { timing });
  };
  beforeAll(async () => {
    stack = await startTestStack();
    chain = stack.chain;
    submitter = await submitterOf('//Alice', 'gw');
  });
  afterAll(async () => stack?.close());
  beforeEach(() => (outcomes.length = 0));

  it("signs with the timing contract's era: 4 blocks here, 64 by default", async () => {
    // Signed, never submitted: under prefixes of their own, so that no nonce of the other tests is skipped.
    const fast = await (await submitterOf('//Alice', 'era-fast')).sign([ipfsMessage()]);
    expect(fast.death - fast.birth).toBe(FAST.eraPeriod);
    const usual = await (await submitterOf('//Alice', 'era-default', ChainTiming.DEFAULT)).sign([ipfsMessage()]);
    expect(usual.death - usual.birth).toBe(64);
  });

  it('reads the batch maximum from the chain and never packs more', async () => {
    expect(submitter.maxBatch).toBe(10);
    await expect(submitter.sign(Array.from({ length: 11 }, () => ipfsMessage()))).rejects.toThrow(RangeError);
  });

  it('settles every job that rode in a transaction, with its events, exactly once', async () => {
    const scanner = tracker();
    const sent = await submitter.submit([ipfsMessage(), ipfsMessage()], (tx) => scanner.record(tx, ['publish:1']));
    // A second job joins the same transaction: it is added, not written over the first.
    await scanner.record(sent, ['publish:2']);
    await tick(chain, 1);
    await scanner.scanOnce();
    expect(outcomes).toHaveLength(1);
    const outcome = outcomes[0]!;
    expect(outcome).toMatchObject({ txHash: sent.hash, status: 'succeeded', jobs: ['publish:1', 'publish:2'] });
    if (outcome.status !== 'succeeded') throw new Error('unreachable');
    expect(outcome.events.map((e) => `${e.section}.${e.method}`)).toEqual(
      expect.arrayContaining(['capacity.CapacityWithdrawn', 'messages.MessagesInBlock', 'utility.BatchCompleted']),
    );
    await scanner.scanOnce();
    expect(outcomes).toHaveLength(1);
    expect(await scanner.pendingCount()).toBe(0);
  });

  it('reports a failed transaction with its pallet and error, by name and by number', async () => {
    const scanner = tracker();
    const sent = await submitter.submit([ipfsMessage(7)], (tx) => scanner.record(tx, ['publish:3']));
    await tick(chain, 1);
    await scanner.scanOnce();
    // Messages is pallet 61 of Frequency's runtime; InvalidPayloadLocation the seventh of its errors.
    expect(outcomes).toEqual([
      expect.objectContaining({
        txHash: sent.hash,
        status: 'failed',
        error: {
          module: 'Messages',
          name: 'InvalidPayloadLocation',
          index: 61,
          code: 6,
          message: 'the chain refused the transaction: messages.InvalidPayloadLocation (pallet index 61, error code 6)',
        },
      }),
    ]);
  });

  it('reports a transaction that never reached a block as expired once its era passed', async () => {
    const scanner = tracker();
    // Recorded, then the process "crashed" before submitting it. (Another key, so that the nonce it took does
    // not hold back the provider's later transactions in this suite.)
    const other = await submitterOf('//Charlie', 'gw');
    const signed = await other.sign([ipfsMessage()]);
    await scanner.record(signed, ['publish:4']);
    await tick(chain, signed.death - (await chain.api.rpc.chain.getHeader()).number.toNumber() + 1);
    await scanner.scanOnce();
    expect(outcomes).toEqual([
      expect.objectContaining({ txHash: signed.hash, status: 'expired', jobs: ['publish:4'] }),
    ]);
  });

  it('lets a new process settle what a killed one submitted, without submitting it again', async () => {
    const before = tracker();
    const sent = await submitter.submit([ipfsMessage()], (tx) => before.record(tx, ['publish:5']));
    // The first worker dies here; another one takes over the scanner.
    const after = tracker();
    await tick(chain, 1);
    await after.scanOnce();
    expect(outcomes).toEqual([
      expect.objectContaining({ txHash: sent.hash, status: 'succeeded', jobs: ['publish:5'] }),
    ]);
    const messages = await chain.api.call.messagesRuntimeApi.getMessagesByIntentId(17, {
      fromBlock: 0,
      fromIndex: 0,
      toBlock: (await chain.api.rpc.chain.getHeader()).number.toNumber() + 1,
      pageSize: 100,
    });
    expect(messages.content.length).toBe(3);
  });

  it('submits again a recorded transaction its submitter let go of, once it is old enough, and only then', async () => {
    const metrics = new Registry();
    const scanner = tracker('gw', { timing: FAST, metrics });
    const signed = await submitter.sign([ipfsMessage()]);
    await scanner.record(signed, ['publish:8']);
    // The submitter died here, before submitting. While it might still be at work, the scan leaves it alone.
    await scanner.scanOnce();
    expect(await resubmitted(metrics, 'submitted')).toBe(0);
    // Then the scan submits the recorded bytes (this devchain seals a block for them at once), once.
    await waitUntil(
      async () => (await scanner.scanOnce()) >= 0 && outcomes.length > 0,
      10_000,
      'the abandoned transaction submitted again and settled',
    );
    expect(outcomes).toEqual([
      expect.objectContaining({ txHash: signed.hash, status: 'succeeded', jobs: ['publish:8'] }),
    ]);
    expect(await resubmitted(metrics, 'submitted')).toBe(1);
  });

  it('leaves a recorded transaction whose nonce another one took to expire, never submitting it again', async () => {
    const metrics = new Registry();
    const timing = new ChainTiming({ recordWithinMs: 200, submissionMs: 50, resubmitAfterMs: 300, gapRefillMs: 400 });
    const scanner = tracker('taken', { timing, metrics });
    // Recorded and never submitted; then its nonce goes to another transaction (a refilled gap), which lands.
    const abandoned = await submitter.sign([ipfsMessage()]);
    const recordedAt = Date.now();
    await scanner.record(abandoned, ['publish:11']);
    const other = await (await submitterOf('//Alice', 'taken')).submit([ipfsMessage()]);
    expect(other.nonce).toBe(abandoned.nonce);
    // Old enough to be submitted again, but the node counts its nonce as taken: the scan leaves it alone.
    await waitUntil(
      async () => Date.now() - recordedAt > timing.resubmitAfterMs,
      5_000,
      'the record to age past resubmitAfterMs',
    );
    await scanner.scanOnce();
    expect(await resubmitted(metrics)).toBe(0);
    await tick(chain, abandoned.death - (await chain.api.rpc.chain.getHeader()).number.toNumber() + 1);
    await scanner.scanOnce();
    expect(outcomes).toEqual([expect.objectContaining({ txHash: abandoned.hash, status: 'expired' })]);
  });

  it('fills a nonce gap that stood still with no reservation after it: the transaction waiting behind it is included', async () => {
    const alice = await loadProviderKey('//Alice');
    const nonces = new NonceManager(redis(), chain.api, alice.address, { prefix: 'gap', timing: FAST });
    const gapped = new CapacitySubmitter(chain.api, alice, nonces, { timing: FAST });
    await nonces.resync();
    // A worker killed between reserving its nonce and submitting: nobody will use it, and no reservation follows.
    const lost = await nonces.reserve();
    const scanner = tracker();
    const behind = await gapped.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:behind-gap']));
    expect(behind.nonce).toBe(lost + 1);
    // Not before the chain stood still behind the gap for gapRefillMs.
    expect(await gapped.fillStandingGap()).toBeUndefined();
    const filled = await waitUntil(() => gapped.fillStandingGap(), 10_000, 'the standing gap filled');
    expect(filled).toBe(lost);
    // Filled once: the gap is gone.
    expect(await gapped.fillStandingGap()).toBeUndefined();
    await tick(chain, 1);
    await waitUntil(
      async () => {
        await scanner.scanOnce();
        return outcomes.some((outcome) => outcome.txHash === behind.hash);
      },
      10_000,
      'the transaction behind the gap settled',
    );
    expect(outcomes).toEqual([expect.objectContaining({ txHash: behind.hash, status: 'succeeded' })]);
  });

  it('refuses to let a record held back past its deadline be submitted, and keeps it for the scan', async () => {
    const timing = new ChainTiming({
      recordWithinMs: 200,
      submissionMs: 100,
      resubmitAfterMs: 1_000,
      gapRefillMs: 1_500,
    });
    const scanner = tracker('late', { timing });
    const signed = await submitter.sign([ipfsMessage()]);
    // Redis holds every write back for 600 ms (as while a replica is promoted): the write lands, too late.
    await redis().call('CLIENT', 'PAUSE', '600', 'WRITE');
    await expect(scanner.record(signed, ['publish:10'])).rejects.toThrow(RecordTooLateError);
    expect(await scanner.pendingCount()).toBe(1);
    // The submitter does not submit: the scan does, once the record is old enough (and the nonce is filled).
    await waitUntil(
      async () => (await scanner.scanOnce()) >= 0 && (await scanner.pendingCount()) === 0,
      10_000,
      'the scan to submit and settle the late record',
    );
  });

  it('never records a settled transaction again, nor the writes that come with it', async () => {
    const scanner = tracker();
    const late = { key: 'gw:late-write', value: 'submitted', ttlSeconds: 60 };
    const sent = await submitter.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:9'], [late]));
    expect(await redis().get(late.key)).toBe('submitted');
    await redis().del(late.key);
    await tick(chain, 1);
    await scanner.scanOnce();
    expect(outcomes).toEqual([expect.objectContaining({ txHash: sent.hash, status: 'succeeded' })]);
    // A write of the record that arrives after its outcome (delayed by a failover, or a job run twice at once).
    await expect(scanner.record(sent, ['publish:9'], [late])).rejects.toThrow(TransactionSettledError);
    expect(await scanner.pendingCount()).toBe(0);
    expect(await redis().exists(late.key)).toBe(0);
    await tick(chain, 1);
    await scanner.scanOnce();
    expect(outcomes).toHaveLength(1);
  });

  it('scans again from the stored position when it moved under the scan (a Redis failover kept older writes)', async () => {
    const prefix = 'moved';
    const seen: TransactionOutcome[] = [];
    const keys = { pending: `${prefix}:tx:pending`, scanned: `${prefix}:tx:scanned` };
    /** What the replica that takes over lacks, taken before the scan. */
    const lost = { record: '', jobs: [] as string[], position: '' };
    let failedOver = false;
    const scanner = new TransactionTracker(chain.api, redis(), {
      prefix,
      onOutcome: async (outcome) => {
        seen.push(outcome);
        // The second transaction's outcome is being settled: the primary dies, and the replica that takes over
        // never got what settling the first one wrote (its record dropped, the position past its block).
        if (outcome.txHash === second.hash && lost.record && !failedOver) {
          failedOver = true;
          await redis().hset(keys.pending, first.hash, lost.record);
          await redis().sadd(`${prefix}:tx:jobs:${first.hash}`, ...lost.jobs);
          await redis().set(keys.scanned, lost.position);
        }
      },
    });
    const first = await submitter.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:6']));
    await tick(chain, 1);
    const second = await submitter.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:7']));
    await tick(chain, 1);
    lost.record = (await redis().hget(keys.pending, first.hash))!;
    lost.jobs = await redis().smembers(`${prefix}:tx:jobs:${first.hash}`);
    lost.position = String((JSON.parse(lost.record) as { birth: number }).birth - 1);

    await expect(scanner.scanOnce()).rejects.toThrow(ScanPositionMovedError);
    await scanner.scanOnce();
    // The first transaction is settled again as what it was, included, and never taken for expired.
    expect(seen.map((outcome) => [outcome.txHash, outcome.status])).toEqual([
      [first.hash, 'succeeded'],
      [second.hash, 'succeeded'],
      [first.hash, 'succeeded'],
    ]);
    expect(await scanner.pendingCount()).toBe(0);
  });

  it('maps the pool refusals to typed errors', () => {
    const kinds = [
      '1014: Priority is too low: (1 vs 1)',
      '1010: Invalid Transaction: Transaction is outdated',
      '1010: Invalid Transaction: Transaction has a bad signature',
      '1010: Invalid Transaction: Inability to pay some fees , e.g. account balance too low',
      '1010: Invalid Transaction: Transaction has an ancient birth block',
      '1010: Invalid Transaction: Custom error: 1',
    ].map((message) => submissionError(new Error(message)).kind);
    expect(kinds).toEqual([
      'nonceConflict',
      'nonceConflict',
      'badSignature',
      'cannotPayFees',
      'ancientBirthBlock',
      'invalid',
    ]);
    expect(new SubmissionError('nonceConflict', '').retryable).toBe(true);
    // The pool has those very bytes: a submission that happened, not a conflict to sign again for.
    const answers = ['1013: Transaction Already Imported', '1014: Priority is too low: (1 vs 1)'];
    expect(answers.map((message) => alreadyImported(submissionError(new Error(message))))).toEqual([true, false]);
  });

  it('refuses a call that cannot be paid with Capacity, as the pool does', async () => {
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(
      submitter.submit([
        chain.api.tx.balances.transferKeepAlive(
          CID.length > 0 ? '5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty' : '',
          1n,
        ).method as Call,
      ]),
    ).rejects.toMatchObject({
      kind: 'invalid',
    });
    silenced.mockRestore();
  });

  it('records nothing for a job run that lost its claim, and uses up the nonce it signed with', async () => {
    const scanner = tracker('fence');
    // Nonces counted afresh from the chain's next index (earlier tests here leave gaps behind on purpose).
    const fenced = await submitterOf('//Alice', 'fence');
    // A later run of the same job took the claim over while this one was held up.
    const claim = { key: 'fence:claim:publication', token: 'run-A' };
    await redis().set(claim.key, 'run-B');
    const link = { key: 'fence:link', value: 'recorded', ttlSeconds: 60 };
    await expect(
      fenced.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:12'], [link], [claim])),
    ).rejects.toThrow(StaleRunError);
    expect(await scanner.pendingCount()).toBe(0);
    expect(await redis().exists(link.key)).toBe(0);
    // Its nonce went to an empty batch: the provider's next transaction is not held back behind a gap.
    const next = await fenced.submit([ipfsMessage()], (tx) => scanner.record(tx, ['publish:13']));
    await tick(chain, 1);
    await scanner.scanOnce();
    expect(outcomes).toEqual([expect.objectContaining({ txHash: next.hash, status: 'succeeded' })]);
  });

  it('forgets a refused transaction only for the job run that holds its claim', async () => {
    const scanner = tracker('fence-forget');
    const claim = { key: 'fence:claim:request', token: 'run-A' };
    await redis().set(claim.key, 'run-A');
    const signed = await (await submitterOf('//Charlie', 'fence')).sign([ipfsMessage()]);
    const link = { key: 'fence:link:request', value: signed.hash, ttlSeconds: 60 };
    await scanner.record(signed, ['request:1'], [link], [claim]);
    await redis().set(claim.key, 'run-B');
    const unlink = [{ key: link.key, delete: true as const }];
    await expect(scanner.forget(signed.hash, unlink, [claim])).rejects.toThrow(StaleRunError);
    expect([await scanner.pendingCount(), await redis().get(link.key)]).toEqual([1, signed.hash]);
    await redis().set(claim.key, 'run-A');
    await scanner.forget(signed.hash, unlink, [claim]);
    expect([await scanner.pendingCount(), await redis().exists(link.key)]).toEqual([0, 0]);
  });
});

describe('the tracker under a leader lease', () => {
  let stack: TestStack;
  beforeAll(async () => (stack = await startTestStack()));
  afterAll(async () => stack?.close());

  it('scans on one replica at a time and settles each transaction once', async () => {
    const { chain } = stack;
    const logger = createLogger({ component: 'test', level: 'silent', pretty: false });
    const outcomes: TransactionOutcome[] = [];
    const trackers = [0, 1].map(
      () =>
        new TransactionTracker(chain.api, stack.redis(), {
          prefix: 'lease',
          onOutcome: async (outcome) => void outcomes.push(outcome),
        }),
    );
    const leaderships = trackers.map((tracker, index) =>
      runAsLeader(
        {
          name: 'tx-tracker',
          identity: `replica-${index}`,
          lock: new RedisLeaseLock(stack.redis(), 'lease', 'tx-tracker'),
          logger,
          timing: { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 },
        },
        ({ signal }) => tracker.scanUntil(signal, { intervalMs: 100 }),
      ),
    );
    try {
      const alice = await loadProviderKey('//Alice');
      const submitter = new CapacitySubmitter(
        chain.api,
        alice,
        new NonceManager(stack.redis(), chain.api, alice.address, { prefix: 'lease' }),
      );
      for (let i = 0; i < 5; i++) {
        const call = chain.api.tx.messages.addIpfsMessage(17, CID, i + 1).method as Call;
        await submitter.submit([call], (tx) => trackers[0]!.record(tx, [`job:${i}`]));
      }
      await waitUntil(async () => outcomes.length >= 5, 5_000, 'five outcomes');
      expect(outcomes.map((outcome) => outcome.jobs[0]).sort()).toEqual(['job:0', 'job:1', 'job:2', 'job:3', 'job:4']);
      expect(leaderships.filter((leadership) => leadership.isLeader())).toHaveLength(1);
    } finally {
      await Promise.all(leaderships.map((leadership) => leadership.stop()));
    }
  });
});
