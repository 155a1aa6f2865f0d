import type { ChainQueries, SchemaDirectory } from '@frequency-gateway/chain';
import type { Job, Logger } from '@frequency-gateway/platform';
import type { Queue } from 'bullmq';
import type { BatchJob, SearchJob } from '../jobs.js';
import { queueMessages, watchedIntents } from './messages.js';

/** Blocks read per step of a search; the job's progress is saved after each. */
const SEARCH_STEP = 1000;

/**
 * Crawls a search's block range (the `blockCount` blocks up to `upperBoundBlock` or the finalized head) and
 * queues its messages as batch jobs addressed to the search's webhook. Progress is kept in the job, so a worker
 * that stops mid-range resumes where it was.
 */
export class SearchCrawler {
  constructor(
    private readonly options: {
      queries: ChainQueries;
      directory: SchemaDirectory;
      queue: Queue<BatchJob>;
      logger: Logger;
    },
  ) {}

  async process(job: Job<SearchJob>): Promise<{ blocks: number; messages: number }> {
    const { queries, directory, queue, logger } = this.options;
    const search = job.data;
    let { next, last } = search;
    if (next === undefined || last === undefined) {
      const finalized = (await queries.finalizedBlock()).number;
      last = Math.min(search.upperBoundBlock || finalized, finalized);
      next = Math.max(1, last - search.blockCount + 1);
      await job.updateData({ ...search, next, last });
    }
    const intents = await watchedIntents(directory, search.intentIds);
    const target = {
      requestId: search.requestId,
      webhookUrl: search.webhookUrl,
      ...(search.dsnpIds ? { dsnpIds: search.dsnpIds } : {}),
    };
    let messages = 0;
    const first = next;
    while (next <= last) {
      const to = Math.min(last, next + SEARCH_STEP - 1);
      messages += await queueMessages(queries, queue, intents, { from: next, to }, target);
      next = to + 1;
      await job.updateData({ ...search, next, last });
    }
    logger.info({ requestId: search.requestId, from: first, to: last, messages }, 'search crawled');
    return { blocks: last - first + 1, messages };
  }
}
