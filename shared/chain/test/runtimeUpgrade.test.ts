// A connection across a runtime upgrade (the devchain's spec 189 to 191): its runtime APIs stay; a capacity
// transaction signed before the upgrade and sent after it is refused for its signature, and goes again signed for
// the new runtime, with the same nonce; the scan settles the refused attempt's record at the upgrade, not at the end
// of its era.
import { devchainControl } from '@frequency-gateway/devchain';
import { waitUntil } from '@frequency-gateway/devstack';
import type { Call } from '@polkadot/types/interfaces';
import {
  CapacitySubmitter,
  NonceManager,
  TransactionTracker,
  loadProviderKey,
  type SignedTransaction,
  type TransactionOutcome,
} from '../src/index.js';
import { startTestStack, tick, type TestStack } from './support/stack.js';

const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

let stack: TestStack;
beforeAll(async () => (stack = await startTestStack()));
afterAll(async () => stack?.close());

it('keeps its runtime APIs, signs again for the new runtime a transaction refused for a signature made before the upgrade, and settles the refused one at the upgrade', async () => {
  const { api } = stack.chain;
  const key = await loadProviderKey('//Alice');
  const submitter = new CapacitySubmitter(
    api,
    key,
    new NonceManager(stack.redis(), api, key.address, { prefix: 'up' }),
  );
  const outcomes: TransactionOutcome[] = [];
  const tracker = new TransactionTracker(api, stack.redis(), {
    prefix: 'up',
    onOutcome: async (outcome) => void outcomes.push(outcome),
  });
  expect(api.runtimeVersion.specVersion.toNumber()).toBe(189);
  const upgradeAt = (await api.rpc.chain.getHeader()).number.toNumber() + 1;
  await devchainControl(stack.devchain.url).upgradeRuntime(upgradeAt);

  const attempts: SignedTransaction[] = [];
  const call = api.tx.messages.addIpfsMessage(17, CID, 100).method as Call;
  const sent = await submitter.submit([call], async (transaction) => {
    attempts.push(transaction);
    await tracker.record(transaction, ['publish:1']);
    // Signed, recorded, not yet sent: the upgrade is enacted now (a block of someone else's).
    if (attempts.length === 1) await tick(stack.chain, 1);
  });

  expect(attempts.map((attempt) => attempt.signedFor.specVersion)).toEqual([189, 191]);
  expect(sent.hash).toBe(attempts[1]!.hash);
  expect(sent.nonce).toBe(attempts[0]!.nonce);
  await tick(stack.chain, 1);
  await tracker.scanOnce();
  const byHash = new Map(outcomes.map((outcome) => [outcome.txHash, outcome]));
  expect(byHash.get(sent.hash)).toMatchObject({ status: 'succeeded', jobs: ['publish:1'] });
  // The era of the refused attempt is 64 blocks long: only the upgrade settles it this soon.
  expect(attempts[0]!.death).toBeGreaterThan((await api.rpc.chain.getHeader()).number.toNumber() + 1);
  expect(byHash.get(attempts[0]!.hash)).toMatchObject({
    status: 'expired',
    blockNumber: upgradeAt,
    runtimeUpgrade: { signedFor: 189, chainRuns: 191 },
  });
  expect(await tracker.pendingCount()).toBe(0);

  // The runtime APIs are the new runtime's, Frequency's own among them (polkadot-js alone would drop those).
  await waitUntil(
    async () =>
      (await api.rpc.state.getRuntimeVersion()).specVersion.toNumber() === 191 && 'schemasRuntimeApi' in api.call,
    10_000,
    "Frequency's runtime APIs on the new runtime",
  );
  expect(await stack.chain.queries.intentByName('dsnp.broadcast')).toMatchObject({
    intentId: 17,
    payloadLocation: 'IPFS',
  });
}, 180_000);
