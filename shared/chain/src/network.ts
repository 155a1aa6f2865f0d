import { DEV_CHAIN_ID, MAINNET_CHAIN_ID } from './signatures/eip712.js';

/** Which Frequency network a node serves, in the names Sign In With Frequency uses. */
export type ChainType = 'Mainnet-Frequency' | 'Paseo-Testnet-Frequency' | 'Dev';

const KNOWN_GENESIS: Record<string, ChainType> = {
  '0x4a587bf17a404e3572747add7aab7bbe56e805a5479c6c436f07f36fcc8d3ae1': 'Mainnet-Frequency',
  '0x203c6838fc78ea3660a2f298a58d859519c72a5efdc0f194abd6f0d5ce1838e0': 'Paseo-Testnet-Frequency',
};

/** The network of a chain by its genesis hash; any chain that is not mainnet or the Paseo testnet is `Dev`. */
export function chainTypeOf(genesisHash: string): ChainType {
  return KNOWN_GENESIS[genesisHash.toLowerCase()] ?? 'Dev';
}

/** The EIP-712 domain chain id Ethereum-key users sign payloads for on that network. */
export function eip712ChainIdOf(type: ChainType): number {
  return type === 'Mainnet-Frequency' ? MAINNET_CHAIN_ID : DEV_CHAIN_ID;
}
