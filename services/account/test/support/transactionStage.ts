import { PassThrough } from 'node:stream';
import { Keyring } from '@polkadot/keyring';
import { u8aToHex } from '@polkadot/util';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import {
  accountCalls,
  CapacitySubmitter,
  type ChainTiming,
  loadProviderKey,
  NonceManager,
  SignedPayloads,
  TransactionTracker,
  type ChainConnection,
  type TransactionOutcome,
} from '@frequency-gateway/chain';
import { holding, startChainStack, type ChainStack, type Hold } from '@frequency-gateway/devstack';
import { createLogger, Registry, type Job } from '@frequency-gateway/platform';
import type { TransactionNotifier } from '@frequency-gateway/webhooks';
import type { EncodedCall, TransactionJob } from '../../src/jobs.js';
import type { AccountNotification } from '../../src/notifications.js';
import { accountRequests } from '../../src/requests.js';
import { AccountTransactions } from '../../src/worker/transactions.js';

/**
 * The account worker's transaction stage in this process, on a devchain and a private Redis: a worker process's
 * stage is `transactionsOf()` (each its own submitter, sharing Redis and the provider's nonces, as two worker
 * processes do), and one tracker settles what they submit. What the application would be sent is kept in
 * `notes` (the delivery itself is the webhooks package's, tested there), every settled transaction in `outcomes`.
 */
export interface TransactionStage {
  chain: ChainConnection;
  tracker: TransactionTracker;
  notes: AccountNotification[];
  outcomes: TransactionOutcome[];
  /** The jobs queued to send a request again (its transaction expired), in order: a test runs them. */
  resends: Job<TransactionJob>[];
  status(): ReturnType<typeof accountRequests.store>;
  /** A worker's stage; with `hold`, its runs stop at the signing boundaries (SIGNING_BOUNDARIES) held. */
  transactionsOf(hold?: Hold): Promise<AccountTransactions>;
  /** A new user's sign-up job (their MSA with a delegation to provider 1), its request queued. */
  signUp(referenceId: string, options?: { proofBy?: string }): Promise<Job<TransactionJob>>;
  /** A job of `calls`, its request queued (what the api would never queue: the worker's own checks at work). */
  jobOf(referenceId: string, calls: EncodedCall[]): Promise<Job<TransactionJob>>;
  /** The notifications of one request. */
  notesOf(referenceId: string): AccountNotification[];
  msaCount(): Promise<number>;
  /** Seals `count` empty blocks, each final at once. */
  seal(count: number): Promise<void>;
  /** What the tracker's leader does after each scan: fills a nonce gap that stood still (see fillStandingGap). */
  fillStandingGap(): Promise<number | undefined>;
  close(): Promise<void>;
}

export async function startTransactionStage(options: {
  prefix: string;
  timing?: ChainTiming;
}): Promise<TransactionStage> {
  const { prefix, timing } = options;
  await cryptoWaitReady();
  const stack: ChainStack = await startChainStack();
  const { chain } = stack;
  const redis = stack.redis();
  const logger = createLogger({
    component: 'test',
    level: 'warn',
    pretty: false,
    destination: new PassThrough().resume(),
  });
  const notes: AccountNotification[] = [];
  const outcomes: TransactionOutcome[] = [];
  const resends: Job<TransactionJob>[] = [];
  const status = () => accountRequests.store(redis, prefix, 3600);
  const notifier = { notify: async (batch: AccountNotification[]) => void notes.push(...batch) };
  // The tracker's outcomes go to a worker's stage built once the tracker is (it records with the tracker).
  let settle: (outcome: TransactionOutcome) => Promise<void> = async () => undefined;
  const tracker = new TransactionTracker(chain.api, redis, {
    prefix,
    ...(timing ? { timing } : {}),
    onOutcome: async (outcome) => {
      outcomes.push(outcome);
      await settle(outcome);
    },
  });
  const key = await loadProviderKey('//Alice');

  const transactionsOf = async (hold?: Hold) => {
    const nonces = new NonceManager(redis, chain.api, key.address, { prefix, ...(timing ? { timing } : {}) });
    const submitter = new CapacitySubmitter(chain.api, key, nonces, timing ? { timing } : {});
    return new AccountTransactions({
      api: chain.api,
      redis,
      prefix,
      submitter: holding(submitter, 'submit', hold, { after: 'after submitting' }),
      tracker: holding(tracker, 'record', hold, { before: 'before recording', after: 'after recording' }),
      capacity: () => undefined,
      status: status(),
      notifier: notifier as unknown as TransactionNotifier,
      providerId: '1',
      resend: async (data: TransactionJob) =>
        void resends.push({
          id: `${data.referenceId}.resend.${data.resent}`,
          name: 'transaction',
          data,
          attemptsMade: 0,
        } as unknown as Job<TransactionJob>),
      logger,
      metrics: new Registry(),
    });
  };
  const settling = await transactionsOf();
  settle = (outcome) => settling.settle(outcome);

  const jobOf = async (referenceId: string, calls: EncodedCall[], accountId = '0x00') => {
    await status().create(referenceId, { state: 'queued', kind: 'SIWF_SIGNUP' });
    const data: TransactionJob = {
      type: 'SIWF_SIGNUP',
      referenceId,
      providerId: '1',
      accountId: accountId as `0x${string}`,
      calls,
    };
    return { id: referenceId, name: 'transaction', data, attemptsMade: 0 } as unknown as Job<TransactionJob>;
  };

  return {
    chain,
    tracker,
    notes,
    outcomes,
    resends,
    status,
    transactionsOf,
    jobOf: (referenceId, calls) => jobOf(referenceId, calls),
    signUp: async (referenceId, signUpOptions = {}) => {
      const keyring = new Keyring({ type: 'sr25519' });
      const user = keyring.addFromUri(`//${prefix}//${referenceId}`);
      const signer = signUpOptions.proofBy ? keyring.addFromUri(signUpOptions.proofBy) : user;
      const best = (await chain.api.rpc.chain.getHeader()).number.toNumber();
      const payload = new SignedPayloads(chain.api).addProvider({
        authorizedMsaId: 1,
        intentIds: [],
        expiration: best + 50,
      });
      const proof = {
        algo: 'Sr25519' as const,
        encodedValue: u8aToHex(signer.sign(SignedPayloads.signingBytes(payload).wrapped)),
      };
      const call = accountCalls(chain.api).build(
        'msa.createSponsoredAccountWithDelegation',
        user.address,
        proof,
        payload,
      );
      const encoded: EncodedCall = {
        pallet: 'msa',
        extrinsicName: 'createSponsoredAccountWithDelegation',
        encodedExtrinsic: call.toHex(),
      };
      return jobOf(referenceId, [encoded], u8aToHex(user.publicKey));
    },
    notesOf: (referenceId) => notes.filter((note) => note.referenceId === referenceId),
    msaCount: async () => Number((await chain.api.query.msa.currentMsaIdentifierMaximum()).toString()),
    fillStandingGap: async () => {
      const nonces = new NonceManager(redis, chain.api, key.address, { prefix, ...(timing ? { timing } : {}) });
      return new CapacitySubmitter(chain.api, key, nonces, timing ? { timing } : {}).fillStandingGap();
    },
    seal: async (count) => {
      for (let i = 0; i < count; i++) await stack.devchain.chain.command({ createEmpty: true, finalize: true });
    },
    close: () => stack.close(),
  };
}
