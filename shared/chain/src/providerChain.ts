import { connectChain, type ChainConnection } from './connection.js';
import { loadProviderKey, verifyProvider, type ProviderKey } from './provider.js';

export interface ProviderChain extends ChainConnection {
  key: ProviderKey;
  providerId: bigint;
}

/**
 * What a worker does at start: connect, load PROVIDER_ACCOUNT_SEED_PHRASE and check that it controls
 * PROVIDER_ID and that this MSA is a registered provider. A wrong key or id throws ProviderIdentityError with
 * a message fit to print before exiting; the connection is closed first.
 */
export async function connectAsProvider(options: {
  url: string;
  seedPhrase: string;
  providerId: bigint | number;
}): Promise<ProviderChain> {
  const key = await loadProviderKey(options.seedPhrase);
  const chain = await connectChain({ url: options.url });
  try {
    await verifyProvider(chain.api, key, options.providerId);
  } catch (error) {
    await chain.close();
    throw error;
  }
  return { ...chain, key, providerId: BigInt(options.providerId) };
}
