// A worker process for the multi-process test: submits COUNT capacity-paid messages with the provider key,
// recording each transaction first, and prints one JSON line per transaction. No retries: a nonce collision
// fails the process (a dropped connection after the record does not: the tracker settles that transaction).
import type { Call } from '@polkadot/types/interfaces';
import { Redis } from 'ioredis';
import {
  CapacitySubmitter,
  NonceManager,
  SubmissionError,
  TransactionTracker,
  connectChain,
  loadProviderKey,
  type SignedTransaction,
} from '../../src/index.js';

const [chainUrl, redisUrl, count, label] = process.argv.slice(2) as [string, string, string, string];
const chain = await connectChain({ url: chainUrl });
const redis = new Redis(redisUrl);
const key = await loadProviderKey('//Alice');
const submitter = new CapacitySubmitter(
  chain.api,
  key,
  new NonceManager(redis, chain.api, key.address, { prefix: 'mp' }),
  {
    attempts: 1,
  },
);
const tracker = new TransactionTracker(chain.api, redis, { prefix: 'mp', onOutcome: async () => undefined });
const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    const call = chain.api.tx.messages.addIpfsMessage(17, cid, i + 1).method as Call;
    let recorded: SignedTransaction | undefined;
    const sent = await submitter
      .submit([call], async (tx) => {
        await tracker.record(tx, [`${label}:${i}`]);
        recorded = tx;
      })
      .catch((error: unknown) => {
        // Recorded, then the connection dropped (a node slow to answer is left): whether the node has it or not,
        // the record is the tracker's to settle, or to submit again, as a pipeline leaves it.
        if (recorded && error instanceof SubmissionError && error.kind === 'rpc') return recorded;
        throw error;
      });
    process.stdout.write(`${JSON.stringify({ hash: sent.hash, nonce: sent.nonce })}\n`);
  }),
);
redis.disconnect();
await chain.close();
process.exit(0);
