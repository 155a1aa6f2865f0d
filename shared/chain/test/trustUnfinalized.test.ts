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
  type TransactionOutcome,
} from '../src/index.js';
import { startTestStack, type TestStack } from './support/stack.js';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const FAST = fastTiming(64);

let stack: TestStack;
beforeAll(async () => (stack = await startTestStack({ sealing: 'manual' })));
afterAll(async () => stack?.close());

it('opens again an outcome settled from a best block that a reorganisation retracted, and settles it from the chain that replaced it', async () => {
  const { api } = stack.chain;
  const seal = (finalize: boolean) => stack.devchain.chain.command({ createEmpty: true, finalize });
  const key = await loadProviderKey('//Alice');
  const submitter = new CapacitySubmitter(
    api,
    key,
    new NonceManager(stack.redis(), api, key.address, { prefix: 'trust' }),
    { timing: FAST },
  );
  const outcomes: TransactionOutcome[] = [];
  const tracker = new TransactionTracker(api, stack.redis(), {
    prefix: 'trust',
    trustUnfinalized: true,
    timing: FAST,
    onOutcome: async (outcome) => void outcomes.push(outcome),
  });
  await seal(true);
  await tracker.scanOnce();

  const call = api.tx.messages.addIpfsMessage(17, CID, 100).method as Call;
  const sent = await submitter.submit([call], (transaction) => tracker.record(transaction, ['publish:1']));
  await seal(false);
  await tracker.scanOnce();
  expect(outcomes).toEqual([expect.objectContaining({ txHash: sent.hash, status: 'succeeded', jobs: ['publish:1'] })]);
  const first = outcomes[0] as TransactionOutcome & { status: 'succeeded' };

  // The block it was settled from is retracted, its transaction dropped: no block of the new best chain has it.
  const reorg = await devchainControl(stack.devchain.url).reorg(1, { dropRetracted: true });
  expect(reorg.retracted).toEqual([first.blockHash]);

  // The scan sees it, opens the outcome again, and the tracker sends the transaction again (the same bytes).
  await waitUntil(
    async () => {
      await tracker.scanOnce();
      await seal(false);
      return outcomes.length === 2;
    },
    15_000,
    'the transaction settled again from the new best chain',
  );
  const second = outcomes[1] as TransactionOutcome & { status: 'succeeded' };
  expect(second).toMatchObject({ txHash: sent.hash, status: 'succeeded', jobs: ['publish:1'] });
  expect(second.blockHash).not.toBe(first.blockHash);

  // Once final, it stays settled, from a block of the final chain.
  await seal(true);
  await tracker.scanOnce();
  expect((await api.rpc.chain.getBlockHash(second.blockNumber)).toHex()).toBe(second.blockHash);
  expect(
    (await api.rpc.chain.getFinalizedHead()).toHex() === second.blockHash ||
      (await api.rpc.chain.getHeader(await api.rpc.chain.getFinalizedHead())).number.toNumber() >= second.blockNumber,
  ).toBe(true);
  expect(outcomes).toHaveLength(2);
  expect(await tracker.pendingCount()).toBe(0);
}, 60_000);
