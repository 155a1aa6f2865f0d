// Broadcasts in bulk for the suites that put the pipeline under faults, and what they left on chain.
import { callJson } from '@frequency-gateway/devstack';
import { ChainQueries } from '@frequency-gateway/chain';
import { batchRows, messagesOf, type PipelineStack } from './pipeline.js';

export const PUBLISHED = '2026-11-21T10:00:00.000Z';

/**
 * Posts `count` broadcasts from one user, `parallel` at a time, each until the api accepts it (503 while Redis
 * is away, connection errors while the api restarts). Calls `during` once `at` of them are accepted.
 */
export async function postBroadcasts(
  stack: PipelineStack,
  options: {
    msaId: number;
    count: number;
    label: string;
    parallel?: number;
    at?: number;
    during?: () => Promise<void>;
  },
): Promise<string[]> {
  const ids: string[] = new Array<string>(options.count);
  let next = 0;
  let accepted = 0;
  let interruption: Promise<void> | undefined;
  const postOne = async (index: number) => {
    for (;;) {
      const answer = await callJson(stack.api.url, 'POST', `/v1/content/${options.msaId}/broadcast`, {
        content: { content: `${options.label} ${index}`, published: PUBLISHED },
      }).catch(() => undefined);
      if (answer?.status === 202) {
        ids[index] = answer.body.referenceId as string;
        accepted++;
        if (accepted === options.at && options.during) interruption = options.during();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await Promise.all(
    Array.from({ length: options.parallel ?? 16 }, async () => {
      for (let index = next++; index < options.count; index = next++) await postOne(index);
    }),
  );
  await interruption;
  return ids;
}

/** Every announcement row of a user on chain in a block range: broadcasts found through their batch files. */
export async function rowsOnChain(stack: PipelineStack, msaId: number, fromBlock: number) {
  const intent = (await new ChainQueries(stack.chain.api).intentByName('dsnp.broadcast'))!;
  const best = (await stack.chain.api.rpc.chain.getHeader()).number.toNumber();
  const messages = await messagesOf(stack.chain, intent.intentId, fromBlock, best + 1);
  const rows: Record<string, unknown>[] = [];
  for (const message of messages)
    rows.push(...(await batchRows(stack.kubo, message.cid!)).filter((row) => row.fromId === BigInt(msaId)));
  return { rows, cids: messages.map((message) => message.cid!) };
}

export const bestBlock = async (stack: PipelineStack) =>
  (await stack.chain.api.rpc.chain.getHeader()).number.toNumber();
