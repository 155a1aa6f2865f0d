import { jest } from '@jest/globals';
import { ChainTiming } from '@frequency-gateway/chain';
import { waitUntil } from '@frequency-gateway/devstack';
import type { Job } from '@frequency-gateway/platform';
import type { TransactionJob } from '../src/jobs.js';
import { startTransactionStage, type TransactionStage } from './support/transactionStage.js';

// Account requests that cannot succeed, mixed into one worker's stream of good sign-ups: each fails alone, with
// its reason and a webhook, and the good ones around it are not held back. The provider's nonce gap refill is set
// far beyond the test, so a good sign-up stuck behind a nonce a refused request left unused would never end here.
describe('one failing account request never holds back another', () => {
  let stage: TransactionStage;
  beforeAll(
    async () =>
      (stage = await startTransactionStage({
        prefix: 'isolation',
        timing: new ChainTiming({ gapRefillMs: 600_000, eraPeriod: 256 }),
      })),
  );
  afterAll(async () => stage?.close());

  test('a call the pool refuses, a call this runtime cannot decode and a proof by the wrong key fail alone', async () => {
    const { chain } = stage;
    const transfer = chain.api.tx.balances.transferKeepAlive('5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty', 1n);
    const poison: Record<string, () => Promise<Job<TransactionJob>>> = {
      // Not payable with Capacity: the pool refuses the transaction, after its nonce was reserved and signed.
      'pool-refused': () =>
        stage.jobOf('pool-refused', [
          { pallet: 'balances', extrinsicName: 'transferKeepAlive', encodedExtrinsic: transfer.method.toHex() },
        ]),
      undecodable: () =>
        stage.jobOf('undecodable', [{ pallet: 'msa', extrinsicName: 'unknown', encodedExtrinsic: '0xffff00' }]),
      // The delegation payload signed by another key than the new account's: the chain refuses the proof.
      'wrong-proof': () => stage.signUp('wrong-proof', { proofBy: '//Mallory' }),
    };
    const good = ['good-1', 'good-2', 'good-3', 'good-4'];
    const order = ['good-1', 'pool-refused', 'good-2', 'undecodable', 'good-3', 'wrong-proof', 'good-4'];
    const before = await stage.msaCount();
    const worker = await stage.transactionsOf();
    // The client library logs the pool's refusal to the console; the request's record and webhook carry it.
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    for (const [index, referenceId] of order.entries()) {
      const job = await (poison[referenceId] ?? (() => stage.signUp(referenceId)))();
      await worker.run(job, { run: `run-${index}` });
    }
    quiet.mockRestore();
    await waitUntil(
      async () => (await stage.tracker.scanOnce()) >= 0 && order.every((id) => stage.notesOf(id).length > 0),
      20_000,
      'every request to end',
    );
    for (const referenceId of good) {
      expect(stage.notesOf(referenceId).map((note) => note.status)).toEqual(['SUCCESS']);
      expect((await stage.status().get(referenceId))?.state).toBe('finalized');
    }
    const reasons: Record<string, RegExp> = {
      'pool-refused': /the node refused the transaction/,
      undecodable: /does not decode in this runtime/,
      'wrong-proof': /msa\./,
    };
    for (const [referenceId, reason] of Object.entries(reasons)) {
      expect(stage.notesOf(referenceId).map((note) => note.status)).toEqual(['FAILED']);
      const record = await stage.status().get(referenceId);
      expect(record?.state).toBe('failed');
      expect(JSON.stringify(record?.error)).toMatch(reason);
    }
    expect(await stage.msaCount()).toBe(before + good.length);
  });
});
