import { holdAt, SIGNING_BOUNDARIES, waitUntil } from '@frequency-gateway/devstack';
import { startTransactionStage, type TransactionStage } from './support/transactionStage.js';

// Two runs of one sign-up's job at once, as BullMQ makes them when a worker stalls past the job's lock: run A is
// held at one boundary of its work, run B of the same job runs to completion, then A goes on. Whatever the
// boundary, one transaction is signed for the sign-up, one MSA is created, and the application is told once.
// Each run has its own submitter (two worker processes), sharing Redis and the provider's nonces.
describe('overlapping runs of one sign-up job', () => {
  let stage: TransactionStage;
  beforeAll(async () => (stage = await startTransactionStage({ prefix: 'overlap' })));
  afterAll(async () => stage?.close());

  test.each(SIGNING_BOUNDARIES)(
    'run A held %s, run B of the same job done: one transaction, one MSA, one webhook',
    async (boundary) => {
      const { tracker } = stage;
      const referenceId = `signup-${boundary.replaceAll(' ', '-')}`;
      const job = await stage.signUp(referenceId);
      const before = await stage.msaCount();
      const hold = holdAt(boundary);
      const runA = (await stage.transactionsOf(hold)).process(job, { run: 'run-A' });
      await hold.reached;
      await (await stage.transactionsOf()).process(job, { run: 'run-B' });
      hold.release();
      await runA;
      await waitUntil(
        async () =>
          (await tracker.scanOnce()) >= 0 &&
          (await tracker.pendingCount()) === 0 &&
          stage.notesOf(referenceId).length > 0,
        30_000,
        `the sign-up of the run held ${boundary} to end`,
      );
      // One more scan: a second transaction for the sign-up would settle now.
      await tracker.scanOnce();
      expect(stage.outcomes.filter((outcome) => outcome.jobs.includes(referenceId))).toHaveLength(1);
      expect(stage.notesOf(referenceId).map((note) => note.status)).toEqual(['SUCCESS']);
      expect(await stage.msaCount()).toBe(before + 1);
      expect(await stage.status().get(referenceId)).toMatchObject({ state: 'finalized', msaId: String(before + 1) });
    },
  );
});
