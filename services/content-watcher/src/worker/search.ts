import type { ChainQueries, SchemaDirectory } from '@frequency-gateway/chain';
import type { Job, Logger } from '@frequency-gateway/platform';
import type { Queue } from 'bullmq';
import type { BatchJob, SearchJob } from '../jobs.js';
import { searchWindow, steps } from './blockRanges.js';
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
      const window = searchWindow(search, (await queries.finalizedBlock()).number);
      next = window.from;
      last = window.to;
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
    for (const range of steps({ from: next, to: last }, SEARCH_STEP)) {
      messages += await queueMessages(queries, queue, intents, range, target);
      await job.updateData({ ...search, next: range.to + 1, last });
    }
    logger.info({ requestId: search.requestId, from: first, to: last, messages }, 'search crawled');
    return { blocks: last - first + 1, messages };
  }
}
