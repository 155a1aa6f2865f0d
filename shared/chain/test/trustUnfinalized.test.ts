// TRUST_UNFINALIZED_BLOCKS: outcomes settled from best blocks, and what happens when one of those blocks is
// retracted by a reorganisation that drops its transactions.
import { devchainControl } from '@frequency-gateway/devchain';
import { fastTiming, waitUntil } from '@frequency-gateway/devstack';
import type { Call } from '@polkadot/types/interfaces';
import {
  CapacitySubmitter,
  NonceManager,
  TransactionTracker,
  loadProviderKey,
  type SignedTransaction,
  type TransactionOutcome,
} from '../src/index.js';
import { startTestStack, type TestStack } from './support/stack.js';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
/** Resubmission after 1.5 s, so that a dropped transaction goes again within the test. */
const FAST = fastTiming(64);

let stack: TestStack;
let submitter: CapacitySubmitter;
beforeAll(async () => {
  stack = await startTestStack({ sealing: 'manual' });
  const key = await loadProviderKey('//Alice');
  const nonces = new NonceManager(stack.redis(), stack.chain.api, key.address, { prefix: 'trust' });
  submitter = new CapacitySubmitter(stack.chain.api, key, nonces, { timing: FAST });
});
afterAll(async () => stack?.close());

const seal = (finalize: boolean) => stack.devchain.chain.command({ createEmpty: true, finalize });
const reorg = (depth: number) => devchainControl(stack.devchain.url).reorg(depth, { dropRetracted: true });

/** A trusting tracker under `prefix`, its outcomes in `outcomes`; `onOutcome` runs inside the scan, after each. */
function trustingTracker(prefix: string, onOutcome: (outcome: TransactionOutcome) => Promise<void> = async () => {}) {
  const outcomes: TransactionOutcome[] = [];
  const tracker = new TransactionTracker(stack.chain.api, stack.redis(), {
    prefix,
    trustUnfinalized: true,
    timing: FAST,
    onOutcome: async (outcome) => {
      outcomes.push(outcome);
      await onOutcome(outcome);
    },
  });
  return { tracker, outcomes };
}

/** Submits an IPFS message recorded with `tracker` for job `job`. */
const publish = (tracker: TransactionTracker, job: string): Promise<SignedTransaction> =>
  submitter.submit([stack.chain.api.tx.messages.addIpfsMessage(17, CID, 100).method as Call], (transaction) =>
    tracker.record(transaction, [job]),
  );

/** Scans and seals until the transaction `hash` was settled a second time; resolves with both outcomes. */
async function settledAgain(tracker: TransactionTracker, outcomes: TransactionOutcome[], hash: string) {
  const mine = () => outcomes.filter((outcome) => outcome.txHash === hash);
  await waitUntil(
    async () => {
      await tracker.scanOnce();
      await seal(false);
      return mine().length === 2;
    },
    15_000,
    'the transaction settled again from the new best chain',
  );
  const [first, second] = mine() as (TransactionOutcome & { status: 'succeeded' })[];
  expect(second).toMatchObject({ status: 'succeeded' });
  expect(second!.blockHash).not.toBe(first!.blockHash);
  // Once final, it stays settled, from a block of the final chain.
  await seal(true);
  await tracker.scanOnce();
  expect((await stack.chain.api.rpc.chain.getBlockHash(second!.blockNumber)).toHex()).toBe(second!.blockHash);
  expect(mine()).toHaveLength(2);
  expect(await tracker.pendingCount()).toBe(0);
}

it('opens again an outcome settled from a best block that a reorganisation retracted, and settles it from the chain that replaced it', async () => {
  const { tracker, outcomes } = trustingTracker('trust');
  await seal(true);
  await tracker.scanOnce();
  const sent = await publish(tracker, 'publish:1');
  await seal(false);
  await tracker.scanOnce();
  expect(outcomes).toEqual([expect.objectContaining({ txHash: sent.hash, status: 'succeeded', jobs: ['publish:1'] })]);

  // The block it was settled from is retracted, its transaction dropped: no block of the new best chain has it.
  // The scan sees it, opens the outcome again, and the tracker sends the transaction again (the same bytes).
  const { retracted } = await reorg(1);
  expect(retracted).toEqual([(outcomes[0] as { blockHash: string }).blockHash]);
  await settledAgain(tracker, outcomes, sent.hash);
}, 60_000);

it('opens it again as well when the reorganisation comes in the middle of a scan round, after the block was scanned', async () => {
  let reorganised: Promise<unknown> | undefined;
  // The reorganisation comes while the scan settles the transaction's block, before the block after it.
  const { tracker, outcomes } = trustingTracker('trust-mid', async () => {
    reorganised ??= reorg(2);
    await reorganised;
  });
  await seal(true);
  await tracker.scanOnce();
  const sent = await publish(tracker, 'publish:2');
  await seal(false);
  await seal(false);
  await tracker.scanOnce();
  expect(outcomes).toEqual([expect.objectContaining({ txHash: sent.hash, status: 'succeeded' })]);
  await settledAgain(tracker, outcomes, sent.hash);
}, 60_000);
