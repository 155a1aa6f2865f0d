// A worker process for the multi-process test: submits COUNT capacity-paid messages with the provider key,
// recording each transaction first, and prints one JSON line per transaction. A nonce collision fails the process
// (the submitter makes one attempt); a dropped connection does not: after the record, the tracker settles that
// transaction, and before it, the call is submitted again.
import type { Call } from '@polkadot/types/interfaces';
import { createLogger } from '@frequency-gateway/platform';
import { Redis } from 'ioredis';
import {
  CapacitySubmitter,
  NonceManager,
  SubmissionError,
  TransactionTracker,
  openChain,
  loadProviderKey,
  type SignedTransaction,
} from '../../src/index.js';

const [chainUrl, redisUrl, count, label] = process.argv.slice(2) as [string, string, string, string];
// Warnings (a node left, a slow node kept) go to stderr, which the test shows when the process fails.
const logger = createLogger({
  component: `submit-worker-${label}`,
  level: 'warn',
  pretty: false,
  destination: process.stderr,
});
const link = openChain({ url: chainUrl, logger });
const chain = await link.ready();
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
    // A failure before the transaction is recorded (the connection dropped while signing: a node that sent
    // nothing for a while is left) has used no nonce yet; the call is submitted again, as its job would be.
    const submitOnce = async (tries: number): Promise<SignedTransaction> => {
      let recorded: SignedTransaction | undefined;
      try {
        return await submitter.submit([call], async (tx) => {
          await tracker.record(tx, [`${label}:${i}`]);
          recorded = tx;
        });
      } catch (error) {
        // Recorded, then the connection dropped: whether the node has it or not, the record is the tracker's to
        // settle, or to submit again, as a pipeline leaves it.
        if (recorded && error instanceof SubmissionError && error.kind === 'rpc') return recorded;
        if (recorded || error instanceof SubmissionError || tries <= 1) throw error;
        logger.warn({ err: error, call: i }, 'submitting again after a failure before the record');
        await link.ready(30_000);
        return submitOnce(tries - 1);
      }
    };
    const sent = await submitOnce(3);
    process.stdout.write(`${JSON.stringify({ hash: sent.hash, nonce: sent.nonce })}\n`);
  }),
);
redis.disconnect();
await chain.close();
process.exit(0);
