import type { SubmittableExtrinsic } from '@polkadot/api/types';
import { startDevchain, type Devchain, type DevchainOptions } from '@frequency-gateway/devchain';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { connectChain, loadProviderKey, type ChainConnection, type ProviderKey } from '../../src/index.js';

/** A devchain with a connected client and a private Redis server, for the chain package's tests. */
export interface TestStack {
  devchain: Devchain;
  chain: ChainConnection;
  redisUrl: string;
  /** A new Redis connection (closed with the stack). */
  redis(): Redis;
  close(): Promise<void>;
}

export async function startTestStack(options: DevchainOptions = {}): Promise<TestStack> {
  const devchain = await startDevchain(options);
  const chain = await connectChain({ url: devchain.url });
  const redisServer: LocalRedis = await startRedisServer();
  const connections: Redis[] = [];
  return {
    devchain,
    chain,
    redisUrl: redisServer.url,
    redis: () => {
      const connection = new Redis(redisServer.url, { maxRetriesPerRequest: null });
      connections.push(connection);
      return connection;
    },
    close: async () => {
      connections.forEach((connection) => connection.disconnect());
      await chain.close();
      await devchain.close();
      await redisServer.stop();
    },
  };
}

/** Signs and sends a transaction, resolving when it is finalized. */
export function sendFinalized(
  tx: SubmittableExtrinsic<'promise'>,
  key: ProviderKey,
  nonce?: number,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    tx.signAndSend(key.address, { signer: key.signer, ...(nonce === undefined ? {} : { nonce }) }, (result) => {
      if (result.status.isFinalized) resolve(result.events.map(({ event }) => `${event.section}.${event.method}`));
      if (result.status.isInvalid || result.status.isDropped) reject(new Error(result.status.type));
    }).catch(reject);
  });
}

/** Makes `count` blocks (instant sealing seals one per transaction) with remarks from //Bob. */
export async function tick(chain: ChainConnection, count: number): Promise<void> {
  const bob = await loadProviderKey('//Bob');
  for (let i = 0; i < count; i++) await sendFinalized(chain.api.tx.system.remark(`tick ${i}`), bob);
}
