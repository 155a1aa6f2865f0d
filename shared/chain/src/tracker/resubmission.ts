import type { ApiPromise } from '@polkadot/api';
import { Counter, type Registry } from 'prom-client';
import { ChainTiming } from '../timing.js';
import { sendSigned } from '../sending.js';
import type { SubmissionError } from '../transactionErrors.js';
import type { PendingRecord, TrackerOptions } from './records.js';

/**
 * What submitting an abandoned transaction again gave: `submitted` (the pool took it), `known` (the pool has it
 * already), `refused` (its nonce is used or its era over: the scan settles it), `unreachable` (tried again later).
 */
type ResubmissionResult = 'submitted' | 'known' | 'refused' | 'unreachable';

/** One counter per registry (a tracker built again, when a start is retried, reuses it). */
export function resubmissionCounter(registry: Registry): Counter<'result'> {
  const name = 'chain_transactions_resubmitted_total';
  return (
    (registry.getSingleMetric(name) as Counter<'result'> | undefined) ??
    new Counter({
      name,
      help: 'Recorded transactions submitted again by the scan after their submitter let go of them, by result',
      labelNames: ['result'],
      registers: [registry],
    })
  );
}

/**
 * The scan's last step: recorded transactions whose submitter let go of them (it died, or lost Redis, between
 * recording and submitting) are submitted again, byte for byte.
 */
export class Resubmission {
  /** When this scanner last submitted each abandoned transaction again. */
  private readonly resubmittedAt = new Map<string, number>();

  constructor(
    private readonly api: ApiPromise,
    private readonly options: Pick<TrackerOptions, 'timing' | 'logger'>,
    private readonly resubmissions: Counter<'result'> | undefined,
  ) {}

  /**
   * Submits again, byte for byte, each recorded transaction older than `resubmitAfterMs`, whose era is still open
   * and whose nonce the node does not count as taken (`system_accountNextIndex`, which counts the pool's ready
   * transactions): its submitter died, or lost Redis, between recording it and submitting it, and left alone it
   * would expire. One in the pool, in a block not yet finalized, or whose nonce another transaction took is left
   * to the scan. Sending the same bytes again is harmless anyway: a pool that has them, or a nonce already used,
   * refuses them. Each is tried once per `resubmitAfterMs`.
   */
  async resubmitAbandoned(pending: Map<string, PendingRecord>, head: number): Promise<void> {
    const now = Date.now();
    const after = (this.options.timing ?? ChainTiming.DEFAULT).resubmitAfterMs;
    const nextIndex = new Map<string, Promise<number>>();
    for (const hash of this.resubmittedAt.keys()) if (!pending.has(hash)) this.resubmittedAt.delete(hash);
    for (const [hash, record] of pending) {
      const { signed, signer } = record;
      if (signed === undefined || signer === undefined || record.death <= head + 1) continue;
      if (now - (record.recordedAt ?? 0) < after || now - (this.resubmittedAt.get(hash) ?? 0) < after) continue;
      if (!nextIndex.has(signer))
        nextIndex.set(
          signer,
          this.api.rpc.system.accountNextIndex(signer).then((index) => index.toNumber()),
        );
      if ((await nextIndex.get(signer)!) > record.nonce) continue;
      this.resubmittedAt.set(hash, now);
      const result = await this.submitAgain(signed);
      this.resubmissions?.inc({ result: result.result });
      const log = { txHash: hash, nonce: record.nonce, result: result.result, reason: result.reason };
      if (result.result === 'submitted') this.options.logger?.info(log, 'abandoned transaction submitted again');
      else this.options.logger?.warn(log, 'abandoned transaction not submitted again');
    }
  }

  private async submitAgain(signed: string): Promise<{ result: ResubmissionResult; reason?: string }> {
    try {
      return { result: await sendSigned(this.api, this.api.createType('Extrinsic', signed)) };
    } catch (error) {
      const refused = error as SubmissionError;
      return { result: refused.kind === 'rpc' ? 'unreachable' : 'refused', reason: refused.message };
    }
  }
}
