import {
  accountCalls,
  expiryReason,
  CapacityShortError,
  submitRecorded,
  SubmissionError,
  UserTransactionError,
  UserTransactions,
  type BeforeSubmit,
  type ChainError,
  type SignedTransaction,
  type CapacityState,
  type CapacitySubmitter,
  type ChainApi,
  type TransactionOutcome,
  type TransactionTracker,
} from '@frequency-gateway/chain';
import {
  holdsClaim,
  StaleRunError,
  takeClaim,
  type Job,
  type JobContext,
  type Logger,
  type RequestStatusStore,
  type RunClaim,
} from '@frequency-gateway/platform';
import type { TransactionNotifier } from '@frequency-gateway/webhooks';
import type { RedisClient } from '@frequency-gateway/platform';
import { Counter, type Registry } from 'prom-client';
import type { EncodedCall, TransactionJob, UserSignedTransaction } from '../jobs.js';
import type { AccountNotification } from '../notifications.js';
import { readOutcome } from './transactionOutcome.js';

/** A request that can never succeed as asked (the node refused it for good): its job ends, the request fails. */
export class RefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'RefusedError';
  }
}

export interface AccountTransactionsOptions {
  api: ChainApi;
  redis: RedisClient;
  prefix: string;
  submitter: CapacitySubmitter;
  tracker: TransactionTracker;
  /** Capacity as last checked (undefined before the first check). */
  capacity(): CapacityState | undefined;
  status: RequestStatusStore;
  notifier: TransactionNotifier;
  providerId: string;
  /** How long the link from a request to its transaction is kept (longer than any transaction lives). */
  linkTtlSeconds?: number;
  /** Queues a job sending a request again (its transaction expired before it was included). */
  resend(job: TransactionJob): Promise<void>;
  /** How many times a request is sent again after its transaction expired before it fails. Default 3. */
  maxResends?: number;
  logger: Logger;
  metrics: Registry;
}

/** Why a request failed: the chain's error (with its pallet index and error code), or the gateway's reason. */
type OutcomeError = ChainError | { message: string };

/**
 * Account transactions (sign-ups, handles, keys, ICS, retirements, revocations) from submission to outcome. A
 * job's user-signed calls go in one capacity-paid `payWithCapacity` or `payWithCapacityBatchAll`; a transaction
 * the user signed themselves goes as they signed it. Either way it is recorded with the tracker (and linked to its
 * request) before it is submitted, so a worker that dies at any point neither submits twice nor loses the
 * outcome. The tracker's outcome finalizes or fails the request, with the MSA id and handle read from the
 * block's events, and notifies the application once.
 */
export class AccountTransactions {
  private readonly finished: Counter<'outcome'>;

  constructor(private readonly options: AccountTransactionsOptions) {
    // One counter per registry: built again when the worker's pipeline start is retried, it is reused.
    const name = 'account_requests_finished_total';
    this.finished =
      (options.metrics.getSingleMetric(name) as Counter<'outcome'> | undefined) ??
      new Counter({
        name,
        help: 'Account requests that reached a final state, by state',
        labelNames: ['outcome'],
        registers: [options.metrics],
      });
  }

  private linkKey(referenceId: string): string {
    return `${this.options.prefix}:request:tx:${referenceId}`;
  }

  /** The job of the request's transaction, kept with its link: what sending it again takes. */
  private jobKey(referenceId: string): string {
    return `${this.options.prefix}:request:job:${referenceId}`;
  }

  /**
   * The claim of one run of a request's job (its fencing token): every run takes it at its start, and a run that
   * lost it to a later run of the same job (its worker stalled past the job's lock) records, forgets and ends
   * nothing more.
   */
  claim(referenceId: string, run: string): RunClaim {
    return { key: `${this.options.prefix}:request:claim:${referenceId}`, token: run };
  }

  /**
   * The transactionPublish processor: `process`, and a request refused for good fails now, with its reason, and
   * its job ends (retrying cannot change the answer).
   */
  async run(
    job: Job<TransactionJob>,
    context: Pick<JobContext, 'run'>,
  ): Promise<Awaited<ReturnType<AccountTransactions['process']>> | { refused: string }> {
    try {
      return await this.process(job, context);
    } catch (error) {
      if (!(error instanceof RefusedError)) throw error;
      await this.refuse(job.data, error.message, this.claim(job.data.referenceId, context.run));
      return { refused: error.reason };
    }
  }

  /** Submits a request's transaction (see `run`); throws RefusedError for a request refused for good. */
  async process(
    job: Job<TransactionJob>,
    { run }: Pick<JobContext, 'run'>,
  ): Promise<{ txHash?: string; resumed?: boolean; stale?: boolean }> {
    const { referenceId } = job.data;
    const { logger, redis, tracker, status } = this.options;
    logger.info({ jobId: job.id, referenceId, type: job.data.type }, 'processing transaction job');
    const ttlSeconds = this.options.linkTtlSeconds ?? 7 * 24 * 3600;
    const claim = this.claim(referenceId, run);
    // Claimed before the link is read: a run that recorded before this claim left its link, and one that
    // records after it is refused.
    await takeClaim(redis, claim, ttlSeconds);
    // A job run again after its transaction was recorded (a retry, a worker that died or stalled) leaves it to
    // the tracker, which also submits it again if the first run never did.
    const linked = await redis.get(this.linkKey(referenceId));
    if (linked && linked !== job.data.after) {
      logger.info({ jobId: job.id, referenceId, txHash: linked }, 'already submitted; the tracker follows it');
      return { txHash: linked, resumed: true };
    }
    const link = this.linkKey(referenceId);
    try {
      const submission = await submitRecorded(
        (beforeSubmit) =>
          job.data.userSigned
            ? this.submitUserSigned(job.data, beforeSubmit)
            : this.submitWithCapacity(job.data.calls, beforeSubmit),
        {
          tracker,
          jobs: [referenceId],
          writes: (signed) => [
            { key: link, value: signed.hash, ttlSeconds },
            { key: this.jobKey(referenceId), value: JSON.stringify(job.data), ttlSeconds },
          ],
          undo: [{ key: link, delete: true }],
          claims: [claim],
        },
      );
      if (submission.kind === 'tracked') {
        // Recorded too late to submit now (the scan submits it), already settled, or sent without an answer:
        // the tracker tells the request.
        logger.info({ jobId: job.id, referenceId, txHash: submission.txHash }, 'left to the tracker');
        return { txHash: submission.txHash, resumed: true };
      }
      const { transaction } = submission;
      await status.update(referenceId, 'submitted', { transaction: { hash: transaction.hash } });
      logger.info({ jobId: job.id, referenceId, txHash: transaction.hash }, 'transaction submitted');
      return { txHash: transaction.hash };
    } catch (error) {
      if (error instanceof StaleRunError) {
        logger.warn({ jobId: job.id, referenceId }, 'a later run of this job took it over: this run stops');
        return { stale: true };
      }
      // Refused by the node (its record forgotten): that transaction will never be included.
      if (error instanceof SubmissionError && error.kind !== 'rpc') {
        // The user signed that very transaction (its nonce, its era): no second attempt can differ.
        if (job.data.userSigned) throw new RefusedError(`the node refused the transaction: ${error.message}`);
        if (error.kind === 'cannotPayFees') throw new CapacityShortError(error.message);
        if (!error.retryable) throw new RefusedError(`the node refused the transaction: ${error.message}`);
      }
      throw error;
    }
  }

  /** The provider pays: the calls in one payWithCapacity(BatchAll), when capacity allows. */
  private async submitWithCapacity(encoded: EncodedCall[], beforeSubmit: BeforeSubmit): Promise<SignedTransaction> {
    const capacity = this.options.capacity();
    if (capacity && !capacity.available) throw new CapacityShortError(capacity.reason ?? 'unavailable');
    const builder = accountCalls(this.options.api);
    let calls;
    try {
      calls = encoded.map((call) => builder.decode(call.encodedExtrinsic));
    } catch (error) {
      throw new RefusedError(`a call does not decode in this runtime: ${(error as Error).message}`);
    }
    return this.options.submitter.submit(calls, beforeSubmit);
  }

  /** The user signed it: checked again (the chain may have moved on since the api took it), then sent as signed. */
  private async submitUserSigned(job: TransactionJob, beforeSubmit: BeforeSubmit): Promise<SignedTransaction> {
    const signed = { ...(job.userSigned as UserSignedTransaction), accountId: job.accountId };
    const transactions = new UserTransactions(this.options.api);
    const call = transactions.callOf(signed.encodedExtrinsic);
    if (!call) throw new RefusedError('the transaction is not one a user may send through the gateway');
    let checked;
    try {
      checked = await transactions.check(signed, call);
    } catch (error) {
      if (error instanceof UserTransactionError) throw new RefusedError(error.message);
      throw error;
    }
    return transactions.submit(signed, checked, beforeSubmit);
  }

  /**
   * Ends a request that cannot be submitted: failed, with the reason, and notified; unless the run that refuses
   * it lost its claim (a later run of the job acts instead). A request already failed is notified again (the
   * notification of a run that died after ending it may be lost); the webhook's id is the same.
   */
  async refuse(job: TransactionJob, reason: string, claim: RunClaim): Promise<void> {
    const error = { message: reason };
    if (await this.options.status.update(job.referenceId, 'failed', { error }, [claim]))
      this.finished.inc({ outcome: 'failed' });
    else if (!(await holdsClaim(this.options.redis, claim))) return;
    await this.notify(job.referenceId, 'FAILED', { error });
  }

  /** The tracker's handler (its Capacity already counted): the outcome of one transaction, for its request. */
  async settle(outcome: TransactionOutcome): Promise<void> {
    const { redis, status, logger } = this.options;
    for (const referenceId of outcome.jobs) {
      // Only the transaction the request last went in counts (a refused earlier attempt may expire later).
      if ((await redis.get(this.linkKey(referenceId))) !== outcome.txHash) continue;
      if (outcome.status === 'succeeded') {
        const { msaId, handle, newPublicKey, revokedProviderId, capacityWithdrawn } = readOutcome(outcome.events);
        const block = { number: outcome.blockNumber, hash: outcome.blockHash };
        const endedNow = await status.update(referenceId, 'finalized', {
          ...(msaId ? { msaId } : {}),
          ...(handle ? { handle } : {}),
          transaction: { hash: outcome.txHash },
          block,
        });
        // An outcome settled again (the tracker scanned its block again) is told again, but counted once.
        if (endedNow) this.finished.inc({ outcome: 'finalized' });
        logger.info({ referenceId, txHash: outcome.txHash, block: outcome.blockNumber, msaId, handle }, 'finalized');
        await this.notify(referenceId, 'SUCCESS', {
          txHash: outcome.txHash,
          blockHash: outcome.blockHash,
          blockNumber: outcome.blockNumber,
          ...(msaId ? { msaId } : {}),
          ...(handle ? { handle } : {}),
          ...(newPublicKey ? { newPublicKey } : {}),
          // A revocation names the provider whose delegation ended, as the reference's webhooks do.
          ...(revokedProviderId ? { providerId: revokedProviderId } : {}),
          ...(capacityWithdrawn ? { capacityWithdrawnEvent: capacityWithdrawn } : {}),
        });
      } else {
        if (outcome.status === 'expired' && (await this.resend(referenceId, outcome))) continue;
        const error: OutcomeError = outcome.status === 'failed' ? outcome.error : { message: expiryReason(outcome) };
        if (await status.update(referenceId, 'failed', { error, transaction: { hash: outcome.txHash } }))
          this.finished.inc({ outcome: 'failed' });
        logger.warn({ referenceId, txHash: outcome.txHash, block: outcome.blockNumber, error }, 'failed');
        await this.notify(referenceId, outcome.status === 'expired' ? 'EXPIRED' : 'FAILED', {
          txHash: outcome.txHash,
          ...('blockHash' in outcome ? { blockHash: outcome.blockHash } : {}),
          blockNumber: outcome.blockNumber,
          error,
        });
      }
    }
  }

  /**
   * Sends a request again whose provider-paid transaction expired before it was included: a job that signs it
   * anew (new nonce, era and runtime), at most `maxResends` times. A transaction the user signed cannot be signed
   * again here: false, and the request fails.
   */
  private async resend(referenceId: string, outcome: TransactionOutcome & { status: 'expired' }): Promise<boolean> {
    const stored = await this.options.redis.get(this.jobKey(referenceId));
    if (!stored) return false;
    const job = JSON.parse(stored) as TransactionJob;
    const resent = (job.resent ?? 0) + 1;
    if (job.userSigned || resent > (this.options.maxResends ?? 3)) return false;
    await this.options.resend({ ...job, after: outcome.txHash, resent });
    this.options.logger.warn(
      { referenceId, txHash: outcome.txHash, block: outcome.blockNumber, resent, reason: expiryReason(outcome) },
      'expired before it was included: sent again',
    );
    return true;
  }

  private async notify(
    referenceId: string,
    status: AccountNotification['status'],
    details: Partial<AccountNotification>,
  ): Promise<void> {
    const record = await this.options.status.get(referenceId);
    const accountId = typeof record?.accountId === 'string' ? record.accountId : undefined;
    const calls = record?.kind === 'CAPACITY_BATCH' && Array.isArray(record.calls) ? record.calls : undefined;
    await this.options.notifier.notify([
      {
        transactionType: (typeof record?.kind === 'string'
          ? record.kind
          : 'SIWF_SIGNUP') as AccountNotification['transactionType'],
        providerId: this.options.providerId,
        referenceId,
        status,
        ...(accountId ? { accountId } : {}),
        ...(calls && status === 'SUCCESS' ? { calls } : {}),
        ...details,
      } satisfies AccountNotification,
    ]);
  }
}
