import { openChain, type ChainConnection, type OpeningChain } from '@frequency-gateway/chain';
import { startDevchain, type Devchain, type DevchainOptions } from '@frequency-gateway/devchain';
import { Redis } from 'ioredis';
import { startRedisServer } from './redisServer.js';

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
