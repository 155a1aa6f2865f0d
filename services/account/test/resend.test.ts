import { fastTiming, holdAt, waitUntil } from '@frequency-gateway/devstack';
import { startTransactionStage, type TransactionStage } from './support/transactionStage.js';

// A provider-paid request whose transaction expired before any block took it (its worker died between recording
// and submitting and the era ran out first, or a runtime upgrade came first) is signed anew and sent again.
const FAST = fastTiming();

describe('a request whose transaction expired before it was included', () => {
  let stage: TransactionStage;
  beforeAll(async () => (stage = await startTransactionStage({ prefix: 'resend', timing: FAST })));
  afterAll(async () => stage?.close());

  test('is sent again in a new transaction, finalized and notified once, never failed', async () => {
    const { tracker } = stage;
    const referenceId = 'signup-expired';
    const job = await stage.signUp(referenceId);
    const before = await stage.msaCount();
    // The first run records its transaction, then its worker is gone: it never submits it.
    const hold = holdAt('after recording');
    const dead = (await stage.transactionsOf(hold)).process(job, { run: 'run-dead' });
    await hold.reached;
    expect(await tracker.pendingCount()).toBe(1);
    // Its era runs out before the scan would send it again (no scan runs meanwhile).
    await stage.seal(FAST.eraPeriod + 1);
    await tracker.scanOnce();
    const expired = stage.outcomes.find((outcome) => outcome.jobs.includes(referenceId));
    expect(expired).toMatchObject({ status: 'expired' });
    expect(stage.notesOf(referenceId)).toEqual([]);
    expect(await stage.status().get(referenceId)).toMatchObject({ state: 'queued' });

    // One job sends it again: signed anew, submitted, finalized.
    expect(stage.resends.map((resend) => resend.data)).toEqual([
      expect.objectContaining({ referenceId, after: expired!.txHash, resent: 1 }),
    ]);
    const sent = await (await stage.transactionsOf()).run(stage.resends[0]!, { run: 'run-resend' });
    expect(sent).toMatchObject({ txHash: expect.not.stringMatching(expired!.txHash) });
    // The expired transaction's nonce is a gap before it, filled once it stood still (as the tracker's leader does).
    await waitUntil(async () => (await stage.fillStandingGap()) !== undefined, 10_000, 'the nonce gap filled');
    await waitUntil(
      async () => (await tracker.scanOnce()) >= 0 && (await stage.status().get(referenceId))?.state === 'finalized',
      10_000,
      'the request sent again finalized',
    );
    expect(await stage.status().get(referenceId)).toMatchObject({ msaId: String(before + 1) });
    expect(stage.notesOf(referenceId).map((note) => note.status)).toEqual(['SUCCESS']);

    // The dead run wakes: it lost its claim, and changes nothing; the resend job run again sends nothing more.
    hold.release();
    await dead;
    expect(await (await stage.transactionsOf()).run(stage.resends[0]!, { run: 'run-again' })).toMatchObject({
      resumed: true,
    });
    await stage.seal(FAST.eraPeriod + 1);
    await tracker.scanOnce();
    expect(await tracker.pendingCount()).toBe(0);
    expect(stage.resends).toHaveLength(1);
    expect(stage.notesOf(referenceId).map((note) => note.status)).toEqual(['SUCCESS']);
    expect(await stage.msaCount()).toBe(before + 1);
  });
});
