import type { RequestStatusStore } from '@frequency-gateway/platform';
import type { Counter } from 'prom-client';

/** How webhooks name what was published (the reference gateway's transaction types). */
export type TransactionType = 'CAPACITY_BATCH' | 'ON_CHAIN_CONTENT';

/** Why a request failed; a chain error names its pallet and error, with their numbers (Messages 61, code 5). */
export interface PublishError {
  message: string;
  /** Chain errors: the pallet and error names, e.g. Messages / TooManyMessagesInBlock, */
  module?: string;
  name?: string;
  /** and their numbers: the pallet's index in the runtime (61) and the error's code in it. */
  index?: number;
  code?: number;
  /** The last failure was the transaction's era running out. */
  expired?: boolean;
}

/** Requests that end together (a publication's, or one that failed before it was batched) and what they published. */
export interface EndingRequests {
  referenceIds: string[];
  transactionType: TransactionType;
  /** On-chain content: its schema, intent and user. */
  onChain?: { schemaId: number; intentId: number; msaId?: string };
}

/** Requests that reached their final state, as the application is told. */
export interface RequestEnd extends EndingRequests {
  status: 'SUCCESS' | 'FAILED' | 'EXPIRED';
  txHash?: string;
  blockHash?: string;
  blockNumber?: number;
  error?: PublishError;
}

/** Told of every end (the notify stage). */
export interface RequestEndListener {
  ended(end: RequestEnd): Promise<void>;
}

const CHANGES_AT_ONCE = 200;

/** Runs `task` over `items`, at most CHANGES_AT_ONCE at a time. */
async function eachRequest(items: string[], task: (item: string) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += CHANGES_AT_ONCE)
    await Promise.all(items.slice(start, start + CHANGES_AT_ONCE).map(task));
}

/**
 * The records of publishing requests, as every stage moves them: the one way a stage changes what
 * GET /v1/requests/{referenceId} shows. States: queued (the api) → processing (document) → batched (batch) →
 * submitted (publish) → finalized (track), or failed by the stage that holds the request: document before the
 * request joined a batch, publish or track once it is in a publication. A request ends once: the end is counted
 * and told to the listener (the webhook); an end delivered again (an outcome the tracker offers twice) is told
 * again, one that contradicts how the request ended is not.
 */
export class RequestRecords {
  constructor(
    private readonly status: RequestStatusStore,
    private readonly options: { listener: RequestEndListener; finished: Counter<'outcome'> },
  ) {}

  /** The document stage takes the request. False when it has already ended: the job is stale, nothing to do. */
  async processing(referenceId: string): Promise<boolean> {
    if (await this.status.update(referenceId, 'processing')) return true;
    const record = await this.status.get(referenceId);
    return !record || !this.status.isFinal(record.state);
  }

  /** The requests' rows are in a batch file, which is about to be published. */
  async batched(referenceIds: string[], batch: { cid: string; schemaId: number }): Promise<void> {
    await eachRequest(referenceIds, (referenceId) => this.status.update(referenceId, 'batched', { batch }));
  }

  /** A transaction carrying the requests' messages is in the node's pool. */
  async submitted(referenceIds: string[], txHash: string): Promise<void> {
    await eachRequest(referenceIds, (referenceId) =>
      this.status.update(referenceId, 'submitted', { transaction: { hash: txHash } }),
    );
  }

  /** Every message of the requests is in a finalized block (the last one's transaction and block given). */
  async finalized(
    requests: EndingRequests,
    last: { txHash: string; blockHash: string; blockNumber: number },
  ): Promise<void> {
    const { txHash, blockHash, blockNumber } = last;
    const recorded = { transaction: { hash: txHash }, block: { number: blockNumber, hash: blockHash } };
    await this.end(requests, 'finalized', recorded, { status: 'SUCCESS', txHash, blockHash, blockNumber });
  }

  /** The requests cannot be published (with the transaction that failed, when one did). */
  async failed(
    requests: EndingRequests,
    error: PublishError,
    transaction: { txHash?: string; blockHash?: string } = {},
  ): Promise<void> {
    await this.end(
      requests,
      'failed',
      { error },
      { status: error.expired ? 'EXPIRED' : 'FAILED', ...transaction, error },
    );
  }

  private async end(
    requests: EndingRequests,
    state: 'finalized' | 'failed',
    details: Record<string, unknown>,
    notice: Omit<RequestEnd, keyof EndingRequests>,
  ): Promise<void> {
    const endedNow = new Set<string>();
    const endedBefore = new Set<string>();
    await eachRequest(requests.referenceIds, async (referenceId) => {
      if (await this.status.update(referenceId, state, details)) endedNow.add(referenceId);
      else if ((await this.status.get(referenceId))?.state === state) endedBefore.add(referenceId);
    });
    this.options.finished.inc({ outcome: state }, endedNow.size);
    const told = requests.referenceIds.filter((id) => endedNow.has(id) || endedBefore.has(id));
    if (told.length > 0) await this.options.listener.ended({ ...requests, referenceIds: told, ...notice });
  }
}
