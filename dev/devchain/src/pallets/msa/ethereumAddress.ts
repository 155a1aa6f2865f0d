import { bnToU8a, stringToU8a, u8aConcat, u8aEq } from '@polkadot/util';
import { ethereumEncode, keccakAsU8a } from '@polkadot/util-crypto';

/** The first byte of keccak256("Frequency"): keeps MSA addresses apart from CREATE2 addresses. */
const DOMAIN_PREFIX = 0xd9;
const SALT = keccakAsU8a(stringToU8a('MSA Generated'));

/**
 * The synthetic Ethereum address of an MSA (the runtime's `msa_id_to_eth_address`): the last 20 bytes of
 * keccak256(0xD9 ‖ msa id as big-endian u64 ‖ keccak256("MSA Generated")).
 */
export function msaEthereumAddress(msaId: bigint): Uint8Array {
  const id = bnToU8a(msaId, { bitLength: 64, isLe: false });
  return keccakAsU8a(u8aConcat([DOMAIN_PREFIX], id, SALT)).slice(12);
}

/** The address in EIP-55 mixed-case form. */
export const checksummed = (address: Uint8Array): string => ethereumEncode(address);

export const isMsaEthereumAddress = (address: Uint8Array, msaId: bigint) => u8aEq(address, msaEthereumAddress(msaId));
