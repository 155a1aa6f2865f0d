import { ChainTiming, openChain, type ChainConnection, type OpeningChain } from '@frequency-gateway/chain';
import { startDevchain, type Devchain, type DevchainOptions } from '@frequency-gateway/devchain';
import { Redis } from 'ioredis';
import { startRedisServer } from './redisServer.js';

/**
 * The timing contract in-process chain tests run on (1 s blocks): a record deadline of 1 s, resubmission at 1.5 s,
 * gap refill at 2 s, and `eraPeriod` blocks of era (4 unless told: a transaction expires within a few blocks).
 */
export const fastTiming = (eraPeriod = 4): ChainTiming =>
  new ChainTiming({
    recordWithinMs: 1_000,
    submissionMs: 400,
    resubmitAfterMs: 1_500,
    gapRefillMs: 2_000,
    eraPeriod,
    blockTimeMs: 1_000,
  });

/** A devchain with a connected client and a private Redis server: what in-process tests of the chain stages use. */
export interface ChainStack {
  devchain: Devchain;
  /** The client as components open it (for what takes an opening chain, e.g. a schema directory). */
  opening: OpeningChain;
  chain: ChainConnection;
  redisUrl: string;
  /** A new Redis connection (closed with the stack). */
  redis(): Redis;
  close(): Promise<void>;
}

export async function startChainStack(options: DevchainOptions = {}): Promise<ChainStack> {
  const devchain = await startDevchain(options);
  const opening = openChain({ url: devchain.url });
  const chain = await opening.ready();
  const redisServer = await startRedisServer();
  const connections: Redis[] = [];
  return {
    devchain,
    opening,
    chain,
    redisUrl: redisServer.url,
    redis: () => {
      const connection = new Redis(redisServer.url, { maxRetriesPerRequest: null });
      connections.push(connection);
      return connection;
    },
    close: async () => {
      connections.forEach((connection) => connection.disconnect());
      await opening.close();
      await devchain.close();
      await redisServer.stop();
    },
  };
}
