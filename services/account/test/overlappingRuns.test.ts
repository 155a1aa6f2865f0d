import { PassThrough } from 'node:stream';
import { Keyring } from '@polkadot/keyring';
import { u8aToHex } from '@polkadot/util';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import {
  accountCalls,
  CapacitySubmitter,
  loadProviderKey,
  NonceManager,
  SignedPayloads,
  TransactionTracker,
  type ChainConnection,
  type TransactionOutcome,
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
import type { TransactionNotifier } from '@frequency-gateway/webhooks';
import type { Redis } from 'ioredis';
import type { TransactionJob } from '../src/jobs.js';
import type { AccountNotification } from '../src/notifications.js';
import { accountRequests } from '../src/requests.js';
import { AccountTransactions } from '../src/worker/transactions.js';

// Two runs of one sign-up's job at once, as BullMQ makes them when a worker stalls past the job's lock: run A is
// held at one boundary of its work, run B of the same job runs to completion, then A goes on. Whatever the
// boundary, one transaction is signed for the sign-up, one MSA is created, and the application is told once.
// Each run has its own submitter (two worker processes), sharing Redis and the provider's nonces.
const PREFIX = 'overlap';

describe('overlapping runs of one sign-up job', () => {
  let stack: ChainStack;
  let chain: ChainConnection;
  let redis: Redis;
  let tracker: TransactionTracker;
  let settling: AccountTransactions;
  const notes: AccountNotification[] = [];
  /** Every transaction settled, whichever request it was for. */
  const outcomes: TransactionOutcome[] = [];
  const logger = createLogger({
    component: 'overlap-test',
    level: 'warn',
    pretty: false,
    destination: new PassThrough().resume(),
  });
  const status = () => accountRequests.store(redis, PREFIX, 3600);
  // What the application would be sent (the delivery itself is the webhooks package's, tested there).
  const notifier = { notify: async (batch: AccountNotification[]) => void notes.push(...batch) };

  /** A worker process's transaction stage; with `hold`, its run stops at that boundary until released. */
  async function transactionsOf(hold?: Hold): Promise<AccountTransactions> {
    const key = await loadProviderKey('//Alice');
    const nonces = new NonceManager(redis, chain.api, key.address, { prefix: PREFIX });
    const submitter = new CapacitySubmitter(chain.api, key, nonces);
    const held = holding(tracker, 'record', hold, { before: 'before recording', after: 'after recording' });
    const submitting = holding(submitter, 'submit', hold, { after: 'after submitting' });
    return new AccountTransactions({
      api: chain.api,
      redis,
      prefix: PREFIX,
      submitter: submitting,
      tracker: held,
      capacity: () => undefined,
      status: status(),
      notifier: notifier as unknown as TransactionNotifier,
      providerId: '1',
      logger,
      metrics: new Registry(),
    });
  }

  /** A new user's sign-up: their MSA with a delegation to provider 1, as the api queues it. */
  async function signUpJob(referenceId: string): Promise<TransactionJob> {
    const user = new Keyring({ type: 'sr25519' }).addFromUri(`//overlap//${referenceId}`);
    const best = (await chain.api.rpc.chain.getHeader()).number.toNumber();
    const payload = new SignedPayloads(chain.api).addProvider({
      authorizedMsaId: 1,
      intentIds: [],
      expiration: best + 50,
    });
    const proof = {
      algo: 'Sr25519' as const,
      encodedValue: u8aToHex(user.sign(SignedPayloads.signingBytes(payload).wrapped)),
    };
    const call = accountCalls(chain.api).build(
      'msa.createSponsoredAccountWithDelegation',
      user.address,
      proof,
      payload,
    );
    return {
      type: 'SIWF_SIGNUP',
      referenceId,
      providerId: '1',
      accountId: u8aToHex(user.publicKey),
      calls: [{ pallet: 'msa', extrinsicName: 'createSponsoredAccountWithDelegation', encodedExtrinsic: call.toHex() }],
    };
  }

  const msaCount = async () => Number((await chain.api.query.msa.currentMsaIdentifierMaximum()).toString());

  beforeAll(async () => {
    await cryptoWaitReady();
    stack = await startChainStack();
    chain = stack.chain;
    redis = stack.redis();
    tracker = new TransactionTracker(chain.api, redis, {
      prefix: PREFIX,
      onOutcome: async (outcome) => {
        outcomes.push(outcome);
        await settling.settle(outcome);
      },
    });
    settling = await transactionsOf();
  });
  afterAll(async () => stack?.close());

  test.each(SIGNING_BOUNDARIES)(
    'run A held %s, run B of the same job done: one transaction, one MSA, one webhook',
    async (boundary) => {
      const referenceId = `signup-${boundary.replaceAll(' ', '-')}`;
      const data = await signUpJob(referenceId);
      await status().create(referenceId, { state: 'queued', kind: 'SIWF_SIGNUP' });
      const job = { id: referenceId, name: 'transaction', data, attemptsMade: 0 } as unknown as Job<TransactionJob>;
      const before = await msaCount();
      const hold = holdAt(boundary);
      const runA = (await transactionsOf(hold)).process(job, { run: 'run-A' });
      await hold.reached;
      await (await transactionsOf()).process(job, { run: 'run-B' });
      hold.release();
      await runA;
      const ended = () => notes.filter((note) => note.referenceId === referenceId);
      await waitUntil(
        async () => (await tracker.scanOnce()) >= 0 && (await tracker.pendingCount()) === 0 && ended().length > 0,
        30_000,
        `the sign-up of the run held ${boundary} to end`,
      );
      // One more scan: a second transaction for the sign-up would settle now.
      await tracker.scanOnce();
      expect(outcomes.filter((outcome) => outcome.jobs.includes(referenceId))).toHaveLength(1);
      expect(ended().map((note) => note.status)).toEqual(['SUCCESS']);
      expect(await msaCount()).toBe(before + 1);
      expect(await status().get(referenceId)).toMatchObject({ state: 'finalized', msaId: String(before + 1) });
    },
  );
});
