import type { ChainQueries, SchemaDirectory } from '@frequency-gateway/chain';
import { INTENT_OF_ANNOUNCEMENT } from '@frequency-gateway/dsnp';
import { bullJobId } from '@frequency-gateway/platform';
import type { Queue } from 'bullmq';
import { batchJobId, type BatchJob, type SearchTarget } from '../jobs.js';

/** The intents watched: the ones asked for, else every DSNP announcement intent the chain has. */
export async function watchedIntents(directory: SchemaDirectory, asked?: number[]): Promise<number[]> {
  if (asked && asked.length > 0) return asked;
  const intents = await Promise.all(
    [...new Set(Object.values(INTENT_OF_ANNOUNCEMENT))].map((name) => directory.intentByName(name)),
  );
  return intents.flatMap((intent) => (intent ? [intent.intentId] : [])).sort((a, b) => a - b);
}

/**
 * Queues a batch job for every message of the intents in blocks `from` to `to` (both included), in chain order.
 * Job ids are the messages' places, so finding a message again queues nothing new.
 */
export async function queueMessages(
  queries: ChainQueries,
  queue: Queue<BatchJob>,
  intentIds: number[],
  range: { from: number; to: number },
  search?: SearchTarget,
): Promise<number> {
  const found = await Promise.all(
    intentIds.map(async (intentId) =>
      (await queries.messages(intentId, range.from, range.to + 1)).map((message) => ({ intentId, message })),
    ),
  );
  const jobs = found
    .flat()
    .filter(({ message }) => message.cid !== undefined || message.payload !== undefined)
    .sort((a, b) => a.message.blockNumber - b.message.blockNumber || a.message.index - b.message.index)
    .map(({ intentId, message }): BatchJob => {
      const { blockNumber, index, schemaId, cid, payload } = message;
      const providerId = message.providerMsaId.toString();
      return {
        blockNumber,
        index,
        intentId,
        schemaId,
        msaId: message.msaId?.toString() ?? providerId,
        providerId,
        ...(cid !== undefined ? { cid } : { payload }),
        ...(search ? { search } : {}),
      };
    });
  for (let start = 0; start < jobs.length; start += 1000) {
    const chunk = jobs.slice(start, start + 1000);
    await queue.addBulk(
      chunk.map((data) => ({
        name: `${data.blockNumber}-${data.index}`,
        data,
        opts: { jobId: bullJobId(batchJobId(data)) },
      })),
    );
  }
  return jobs.length;
}
