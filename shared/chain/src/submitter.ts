import type { ApiPromise } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { Call } from '@polkadot/types/interfaces';
import { inSpan, SpanKind, StaleRunError } from '@frequency-gateway/platform';
import { SubmissionError } from './transactionErrors.js';
import { sendSigned } from './sending.js';
import type { NonceManager } from './nonces.js';
import type { ProviderKey } from './provider.js';
import { ChainTiming } from './timing.js';

/** A signed transaction, known before it reaches the node. */
export interface SignedTransaction {
  hash: `0x${string}`;
  nonce: number;
  /** The mortal era: valid from `birth` up to but excluding `death`. */
  birth: number;
  death: number;
  extrinsic: SubmittableExtrinsic<'promise'>;
}

export interface SubmitterOptions {
  /** The timing contract (default ChainTiming.DEFAULT): its `eraPeriod` is each transaction's mortal era, in blocks. */
  timing?: ChainTiming;
  /** Attempts after nonce conflicts (with a resynced nonce) before giving up. Default 3. */
  attempts?: number;
}

/** What happens between signing and submitting: recording the transaction so that no outcome is lost. */
export type BeforeSubmit = (transaction: SignedTransaction) => Promise<void>;

/**
 * Signs and submits capacity-paid transactions for the provider: `frequencyTxPayment.payWithCapacity` for one
 * call, `payWithCapacityBatchAll` for up to the chain's maximum batch length. Each transaction gets a reserved
 * nonce and a mortal era from the finalized head, so several can be in flight per block.
 */
export class CapacitySubmitter {
  readonly maxBatch: number;

  constructor(
    private readonly api: ApiPromise,
    private readonly key: ProviderKey,
    private readonly nonces: NonceManager,
    private readonly options: SubmitterOptions = {},
  ) {
    this.maxBatch = (
      api.consts.frequencyTxPayment.maximumCapacityBatchLength as unknown as { toNumber(): number }
    ).toNumber();
  }

  /** Signs one call wrapped in payWithCapacity, or several in payWithCapacityBatchAll. */
  async sign(calls: Call[]): Promise<SignedTransaction> {
    if (calls.length === 0) throw new RangeError('nothing to submit');
    if (calls.length > this.maxBatch)
      throw new RangeError(`${calls.length} calls exceed the chain's capacity batch maximum of ${this.maxBatch}`);
    const { frequencyTxPayment } = this.api.tx;
    return this.signWith(
      calls.length === 1
        ? frequencyTxPayment.payWithCapacity(calls[0] as Call)
        : frequencyTxPayment.payWithCapacityBatchAll(calls),
    );
  }

  /** Signs with a reserved nonce (or `nonce`) and a mortal era from the finalized head. */
  private async signWith(tx: SubmittableExtrinsic<'promise'>, nonce?: number): Promise<SignedTransaction> {
    const finalized = await this.api.rpc.chain.getFinalizedHead();
    const header = await this.api.rpc.chain.getHeader(finalized);
    const era = this.api.createType('ExtrinsicEra', {
      current: header.number.toNumber(),
      period: (this.options.timing ?? ChainTiming.DEFAULT).eraPeriod,
    });
    const used = nonce ?? (await this.nonces.reserve());
    await tx.signAsync(this.key.address, { signer: this.key.signer, nonce: used, era, blockHash: finalized });
    const mortal = era.asMortalEra;
    return {
      hash: tx.hash.toHex() as `0x${string}`,
      nonce: used,
      birth: mortal.birth(header.number.toNumber()),
      death: mortal.death(header.number.toNumber()),
      extrinsic: tx,
    };
  }

  /**
   * Uses up a reserved nonce whose transaction was signed and will not be included (a stale job run's, which a
   * later run of its job replaces; or one the pool refused for what it carries), with an empty capacity batch
   * that does nothing, so that the provider's later transactions are not held back behind the gap until the
   * nonce manager refills it. Best effort: a refusal (the nonce was used meanwhile, Capacity is short) leaves it
   * to the refill.
   */
  async fill(nonce: number): Promise<void> {
    try {
      const filler = await this.signWith(this.api.tx.frequencyTxPayment.payWithCapacityBatchAll([]), nonce);
      await sendSigned(this.api, filler.extrinsic);
    } catch {
      // Left to the nonce manager's gap refill.
    }
  }

  /**
   * Fills a nonce gap that stood still for the timing contract's `gapRefillMs` (NonceManager.standingGap) with an
   * empty batch, so that the transactions signed after it are included; answers the nonce filled, if any. The
   * tracker's scan calls it, so a gap left by a worker killed between reserving and submitting does not hold back
   * the provider's transactions when no further reservation comes.
   */
  async fillStandingGap(): Promise<number | undefined> {
    const nonce = await this.nonces.standingGap();
    if (nonce !== undefined) await this.fill(nonce);
    return nonce;
  }

  /**
   * Signs, lets `beforeSubmit` record the transaction, then submits it. A nonce conflict resyncs the nonce
   * and signs again (the record of the refused attempt expires harmlessly with its era).
   */
  async submit(calls: Call[], beforeSubmit?: BeforeSubmit): Promise<SignedTransaction> {
    return inSpan(
      'chain submit',
      { kind: SpanKind.CLIENT, attributes: { 'chain.calls': calls.length } },
      async (span) => {
        const transaction = await this.signAndSubmit(calls, beforeSubmit);
        span.setAttributes({ 'chain.tx_hash': transaction.hash, 'chain.nonce': transaction.nonce });
        return transaction;
      },
    );
  }

  private async signAndSubmit(calls: Call[], beforeSubmit?: BeforeSubmit): Promise<SignedTransaction> {
    const attempts = this.options.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      const transaction = await this.sign(calls);
      try {
        await beforeSubmit?.(transaction);
      } catch (error) {
        // A stale run: its transaction goes nowhere, and its nonce must not stay a gap.
        if (error instanceof StaleRunError) await this.fill(transaction.nonce);
        throw error;
      }
      try {
        await sendSigned(this.api, transaction.extrinsic);
        return transaction;
      } catch (error) {
        const refused = error as SubmissionError;
        if (refused.kind === 'nonceConflict' && attempt < attempts) {
          await this.nonces.resync();
          continue;
        }
        // Refused for what it carries (or its fees): its nonce stayed unused, and must not hold back the provider's
        // next transactions behind a gap. A dropped connection leaves its fate unknown; a nonce conflict means the
        // nonce is taken.
        if (refused.kind !== 'rpc' && refused.kind !== 'nonceConflict') await this.fill(transaction.nonce);
        throw refused;
      }
    }
  }
}

export { SubmissionError };
