import { PassThrough } from 'node:stream';
import {
  CapacitySubmitter,
  ChainQueries,
  loadProviderKey,
  NonceManager,
  SchemaDirectory,
  TransactionTracker,
  type ChainConnection,
} from '@frequency-gateway/chain';
import {
  holdAt,
  holding,
  SIGNING_BOUNDARIES,
  startChainStack,
  waitUntil,
  type Hold,
  type ChainStack,
} from '@frequency-gateway/devstack';
import { createLogger, Registry, type Job } from '@frequency-gateway/platform';
import type { ContentStore } from '@frequency-gateway/storage';
import type { Redis } from 'ioredis';
import type { OnChainJob } from '../src/jobs/publish.js';
import { contentRequests } from '../src/requests.js';
import { publishingMetrics } from '../src/worker/metrics.js';
import { Packer } from '../src/worker/publish/packer.js';
import { PublicationBook } from '../src/worker/publish/publications.js';
import { Publisher } from '../src/worker/publish/publisher.js';
import { RequestRecords, type RequestEnd } from '../src/worker/requestRecords.js';
import { PublicationSettler } from '../src/worker/track/settler.js';
import { createOnChainIntent, FIRST_NEW_ID } from './support/chainSetup.js';

// Two runs of one publish job at once, as BullMQ makes them when a worker stalls past the job's lock: run A is
// held at one boundary of its work, run B of the same job runs to completion, then A goes on. Whatever the
// boundary, one transaction carries the message, the request ends once, finalized, and nothing stays recorded.
// Each run has its own packer and submitter (two worker processes), sharing Redis and the provider's nonces.
const PREFIX = 'overlap';

describe('overlapping runs of one publish job', () => {
  let stack: ChainStack;
  let chain: ChainConnection;
  let redis: Redis;
  let tracker: TransactionTracker;
  let records: RequestRecords;
  const ends: RequestEnd[] = [];
  const logger = createLogger({
    component: 'overlap-test',
    level: 'warn',
    pretty: false,
    destination: new PassThrough().resume(),
  });
  const status = () => contentRequests.store(redis, PREFIX, 3600);
  const book = () => new PublicationBook(redis, PREFIX);

  /** A worker process's publish stage; with `hold`, its run stops at that boundary until released. */
  async function publisherOf(hold?: Hold): Promise<Publisher> {
    const key = await loadProviderKey('//Alice');
    const nonces = new NonceManager(redis, chain.api, key.address, { prefix: PREFIX });
    const submitter = new CapacitySubmitter(chain.api, key, nonces);
    const held = holding(tracker, 'record', hold, { before: 'before recording', after: 'after recording' });
    const metrics = publishingMetrics(new Registry());
    const packer = new Packer(submitter, {
      windowMs: 0,
      submissions: book().submissions(held),
      redis,
      logger,
      transactions: metrics.transactions,
      callsPerTransaction: metrics.callsPerTransaction,
    });
    const sending = holding(packer, 'send', hold, { after: 'after submitting' });
    return new Publisher({
      api: chain.api,
      queries: new ChainQueries(chain.api),
      book: book(),
      packer: sending,
      redis,
      // On-chain content never reads the content store.
      store: {} as ContentStore,
      directory: new SchemaDirectory(stack.opening, { readyTimeoutMs: 10_000, intentTtlMs: 60_000 }),
      records,
      providerId: 1n,
      maxBatch: submitter.maxBatch,
    });
  }

  const onChainMessages = async () =>
    (
      await chain.api.call.messagesRuntimeApi.getMessagesByIntentId(FIRST_NEW_ID, {
        fromBlock: 0,
        fromIndex: 0,
        toBlock: (await chain.api.rpc.chain.getHeader()).number.toNumber() + 1,
        pageSize: 1000,
      })
    ).content.length;

  beforeAll(async () => {
    stack = await startChainStack();
    chain = stack.chain;
    await createOnChainIntent(chain.api, 'overlap.note');
    redis = stack.redis();
    records = new RequestRecords(status(), {
      listener: { ended: async (end) => void ends.push(end) },
      finished: publishingMetrics(new Registry()).finished,
    });
    const settler = new PublicationSettler({
      book: book(),
      records,
      publisher: { add: async () => undefined },
      maxAttempts: 2,
      retryDelayMs: 1_000,
      logger,
    });
    tracker = new TransactionTracker(chain.api, redis, {
      prefix: PREFIX,
      onOutcome: (outcome) => settler.settle(outcome),
    });
  });
  afterAll(async () => stack?.close());

  test.each(SIGNING_BOUNDARIES)(
    'run A held %s, run B of the same job done: one transaction, one end',
    async (boundary) => {
      const referenceId = `overlap-${boundary.replaceAll(' ', '-')}`;
      await status().create(referenceId, { state: 'queued', kind: 'on-chain' });
      const data: OnChainJob = {
        referenceId,
        schemaId: FIRST_NEW_ID,
        intentId: FIRST_NEW_ID,
        payload: '0x02',
        published: new Date().toISOString(),
        acceptedAt: new Date().toISOString(),
      };
      const job = { id: referenceId, name: 'on-chain', data, attemptsMade: 0 } as unknown as Job<OnChainJob>;
      const before = await onChainMessages();
      const hold = holdAt(boundary);
      const runA = (await publisherOf(hold)).process(job, { log: logger, run: 'run-A' });
      await hold.reached;
      await (await publisherOf()).process(job, { log: logger, run: 'run-B' });
      hold.release();
      await runA;
      await waitUntil(
        async () =>
          (await tracker.scanOnce()) >= 0 &&
          (await tracker.pendingCount()) === 0 &&
          ends.some((end) => end.referenceIds.includes(referenceId)),
        30_000,
        `the request of the run held ${boundary} to end`,
      );
      expect(await onChainMessages()).toBe(before + 1);
      expect(ends.filter((end) => end.referenceIds.includes(referenceId)).map((end) => end.status)).toEqual([
        'SUCCESS',
      ]);
      expect((await status().get(referenceId))?.state).toBe('finalized');
    },
  );
});
