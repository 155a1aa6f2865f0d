import type { TransactionOutcome } from '@frequency-gateway/chain';
import type { Logger } from '@frequency-gateway/platform';
import type { JobHandOff } from '../handOff.js';
import { PUBLISH_JOB_NAMES, type PublishJobs } from '../../jobs/publish.js';
import { endingOf, parseMessageId, type PublicationBook, type PublicationRecord } from '../publish/publications.js';
import type { RequestRecords } from '../requestRecords.js';
import { decide } from './decision.js';

export interface PublicationSettlerOptions {
  book: PublicationBook;
  records: RequestRecords;
  /** publishQueue, where publications go again as `retry` jobs. */
  publisher: JobHandOff<Pick<PublishJobs, 'retry'>>;
  /** Re-submissions after retriable failures or expiry before a request fails (PUBLISH_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Wait before going again after the chain refused a transaction (a block time). */
  retryDelayMs: number;
  logger: Logger;
}

/**
 * The track stage: the tracker's outcomes, settled. Each transaction's outcome moves the messages it carried
 * (decision.ts says how); when every message of a publication is in a finalized block its requests are
 * finalized, when one cannot be published they fail, and pending messages go back to the publish stage as a
 * `retry` job.
 */
export class PublicationSettler {
  constructor(private readonly options: PublicationSettlerOptions) {}

  async settle(outcome: TransactionOutcome): Promise<void> {
    const byPublication = new Map<string, number[]>();
    for (const id of outcome.jobs) {
      const { publicationId, index } = parseMessageId(id);
      byPublication.set(publicationId, [...(byPublication.get(publicationId) ?? []), index]);
    }
    for (const [publicationId, indices] of byPublication) {
      const record = await this.options.book.get(publicationId);
      if (record) await this.apply(record, indices, outcome);
    }
  }

  private async apply(record: PublicationRecord, indices: number[], outcome: TransactionOutcome): Promise<void> {
    const { book, records, publisher, logger } = this.options;
    const decision = decide(record, indices, outcome, this.options.maxAttempts);
    if (!decision) return;
    const { publication } = record;
    const { changes, attempts, solo, verdict } = decision;
    // Settled again (see decide): nothing to change, the verdict's effects are done again.
    if (changes.size > 0) await book.set(publication.id, changes, { attempts, solo });
    const requests = publication.referenceIds.length;
    switch (verdict.kind) {
      case 'finalize':
        await records.finalized(endingOf(publication), verdict);
        logger.info({ publicationId: publication.id, requests, block: verdict.blockNumber }, 'finalized');
        return;
      case 'fail': {
        const transaction =
          outcome.status === 'expired' ? {} : { txHash: outcome.txHash, blockHash: outcome.blockHash };
        await records.failed(endingOf(publication), verdict.error, transaction);
        logger.warn({ publicationId: publication.id, requests, error: verdict.error }, 'failed');
        return;
      }
      case 'publish-again':
        await publisher.add(
          PUBLISH_JOB_NAMES.retry,
          { publicationId: publication.id },
          {
            jobId: `${publication.id}~${outcome.txHash.slice(2, 18)}`,
            delay: verdict.afterABlock ? this.options.retryDelayMs : 0,
          },
        );
        logger.info(
          { publicationId: publication.id, attempts, txHash: outcome.txHash, outcome: outcome.status },
          'publishing again',
        );
        return;
      case 'wait':
        return;
    }
  }
}
