import type { ApiPromise } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { Call } from '@polkadot/types/interfaces';
import { inSpan, SpanKind, StaleRunError, type Logger } from '@frequency-gateway/platform';
import { SubmissionError } from './transactionErrors.js';
import { sendSigned } from './sending.js';
import type { NonceManager } from './nonces.js';
import type { ProviderKey } from './provider.js';
import { ChainTiming } from './timing.js';
import { runtimeVersions, sameRuntime, type RuntimeVersions } from './runtimeVersions.js';

/** A signed transaction, known before it reaches the node. */
export interface SignedTransaction {
  hash: `0x${string}`;
  nonce: number;
  /** The mortal era: valid from `birth` up to but excluding `death`. */
  birth: number;
  death: number;
  /** The runtime its signature is for: its signed payload carries these versions, so no other runtime takes it. */
  signedFor: RuntimeVersions;
  extrinsic: SubmittableExtrinsic<'promise'>;
}

export interface SubmitterOptions {
  /** The timing contract (default ChainTiming.DEFAULT): its `eraPeriod` is each transaction's mortal era, in blocks. */
  timing?: ChainTiming;
  /** Attempts after nonce conflicts (with a resynced nonce) or a runtime upgrade before giving up. Default 3. */
  attempts?: number;
  /** How long a transaction refused after a runtime upgrade waits for the api to load the new runtime. Default 30 s. */
  runtimeWaitMs?: number;
  /** Where a transaction signed again for a new runtime is logged. */
  logger?: Pick<Logger, 'warn'>;
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
    return this.signWith(this.wrap(calls));
  }

  /** One call in payWithCapacity, several in payWithCapacityBatchAll (built anew for every signing). */
  private wrap(calls: Call[]): SubmittableExtrinsic<'promise'> {
    const { frequencyTxPayment } = this.api.tx;
    return calls.length === 1
      ? frequencyTxPayment.payWithCapacity(calls[0] as Call)
      : frequencyTxPayment.payWithCapacityBatchAll(calls);
  }

  /**
   * Whether the node's best block runs a newer runtime than `signedFor` (an upgrade came between signing and
   * submitting, and the signature no longer holds); if so, resolves once the api has that runtime's metadata and
   * versions, within `runtimeWaitMs`.
   */
  private async upgradedSince(signedFor: RuntimeVersions): Promise<boolean> {
    const node = runtimeVersions(await this.api.rpc.state.getRuntimeVersion());
    if (node.specVersion <= signedFor.specVersion) return false;
    const until = Date.now() + (this.options.runtimeWaitMs ?? 30_000);
    while (runtimeVersions(this.api.runtimeVersion).specVersion < node.specVersion) {
      if (Date.now() > until) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return true;
  }

  /**
   * Signs with a reserved nonce (or `nonce`) and a mortal era from the finalized head, for the runtime the api
   * knows (signed again should the api learn of a newer one meanwhile, so that `signedFor` is what it signed).
   */
  private async signWith(tx: SubmittableExtrinsic<'promise'>, nonce?: number): Promise<SignedTransaction> {
    const finalized = await this.api.rpc.chain.getFinalizedHead();
    const header = await this.api.rpc.chain.getHeader(finalized);
    const era = this.api.createType('ExtrinsicEra', {
      current: header.number.toNumber(),
      period: (this.options.timing ?? ChainTiming.DEFAULT).eraPeriod,
    });
    const used = nonce ?? (await this.nonces.reserve());
    let signedFor: RuntimeVersions;
    do {
      signedFor = runtimeVersions(this.api.runtimeVersion);
      await tx.signAsync(this.key.address, { signer: this.key.signer, nonce: used, era, blockHash: finalized });
    } while (!sameRuntime(signedFor, runtimeVersions(this.api.runtimeVersion)));
    const mortal = era.asMortalEra;
    return {
      hash: tx.hash.toHex() as `0x${string}`,
      nonce: used,
      birth: mortal.birth(header.number.toNumber()),
      death: mortal.death(header.number.toNumber()),
      signedFor,
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
   * and signs again (the record of the refused attempt expires harmlessly with its era). A bad signature because
   * the node upgraded its runtime after the signing signs again with the same nonce, for the new runtime (the
   * record of the refused attempt is settled expired once the scan reaches the upgrade).
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
    let nonce: number | undefined;
    for (let attempt = 1; ; attempt++) {
      const transaction = nonce === undefined ? await this.sign(calls) : await this.signWith(this.wrap(calls), nonce);
      nonce = undefined;
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
        if (
          refused.kind === 'badSignature' &&
          attempt < attempts &&
          (await this.upgradedSince(transaction.signedFor))
        ) {
          const { hash, signedFor } = transaction;
          this.options.logger?.warn(
            {
              txHash: hash,
              nonce: transaction.nonce,
              signedFor: signedFor.specVersion,
              now: this.api.runtimeVersion.specVersion.toNumber(),
            },
            'refused for a signature made before a runtime upgrade: signed again for the new runtime',
          );
          nonce = transaction.nonce;
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
