import type { Codec } from '@polkadot/types/types';
import { stringToU8a, u8aConcat, u8aEq, u8aToHex } from '@polkadot/util';
import { ed25519Verify, keccakAsU8a, secp256k1Expand, secp256k1Recover, sr25519Verify } from '@polkadot/util-crypto';

/** A user's signature as the gateway's APIs carry it: the algorithm and the 0x-hex signature. */
export interface UserSignature {
  algo: 'Sr25519' | 'Ed25519' | 'Ecdsa';
  encodedValue: string;
}

/** The variant and bytes of a UnifiedSignature / MultiSignature value. */
export interface SignatureParts {
  type: 'Sr25519' | 'Ed25519' | 'Ecdsa';
  bytes: Uint8Array;
}

export function signatureParts(signature: Codec): SignatureParts {
  const value = signature as unknown as { type: string; value: Codec };
  if (value.type !== 'Sr25519' && value.type !== 'Ed25519' && value.type !== 'Ecdsa') {
    throw new Error(`unknown signature variant ${value.type}`);
  }
  return { type: value.type, bytes: value.value.toU8a(true) };
}

const ETHEREUM_SUFFIX = new Uint8Array(12).fill(0xee);

/** The AccountId32 of an Ethereum-style key: its 20-byte address followed by twelve 0xEE bytes. */
export function ethereumAccountId(address20: Uint8Array): Uint8Array {
  return u8aConcat(address20, ETHEREUM_SUFFIX);
}

/** Whether an AccountId32 is an Ethereum-style one (ends in twelve 0xEE bytes). */
export const isEthereumAccount = (account: Uint8Array) => u8aEq(account.slice(20), ETHEREUM_SUFFIX);

/** The Ethereum address of an AccountId32, or the zero address when it is not an Ethereum-style account. */
export const ethereumAddressOf = (account: Uint8Array) =>
  isEthereumAccount(account) ? account.slice(0, 20) : new Uint8Array(20);

/** Whether a 65-byte signature over a 32-byte digest recovers to the key behind an Ethereum-style account. */
function recoversTo(signature: Uint8Array, digest: Uint8Array, account: Uint8Array): boolean {
  if (signature.length !== 65) return false;
  const v = signature[64] as number;
  const recovery = v > 26 ? v - 27 : v;
  if (recovery > 3) return false;
  try {
    const publicKey = secp256k1Expand(secp256k1Recover(digest, signature.slice(0, 64), recovery));
    return u8aEq(ethereumAccountId(keccakAsU8a(publicKey).slice(12)), account);
  } catch {
    return false;
  }
}

/** The runtime's Ethereum check: keccak of the EIP-191 prefixed message, then plain keccak of the message. */
function verifyEthereum(message: Uint8Array, signature: Uint8Array, account: Uint8Array): boolean {
  const prefixed = u8aConcat(stringToU8a(`\x19Ethereum Signed Message:\n${message.length}`), message);
  return recoversTo(signature, keccakAsU8a(prefixed), account) || recoversTo(signature, keccakAsU8a(message), account);
}

/**
 * Checks one signature over exactly `message` for the AccountId32 `signer`, with no wrapping forgiveness (the
 * strictness of the runtime; util-crypto's signatureVerify would also accept wrapped messages). ECDSA
 * signatures are Ethereum-style: the recovered key's address must be the account's.
 */
export function verifyExactly(message: Uint8Array, signature: SignatureParts, signer: Uint8Array): boolean {
  try {
    if (signature.type === 'Sr25519') return sr25519Verify(message, signature.bytes, signer);
    if (signature.type === 'Ed25519') return ed25519Verify(message, signature.bytes, signer);
    return verifyEthereum(message, signature.bytes, signer);
  } catch {
    return false;
  }
}

/**
 * The ways a user's signature bytes can be read for an account, most likely first: Ethereum accounts sign with
 * ECDSA (65 bytes, or 66 typed 02); others with sr25519 or ed25519 (64 bytes, or 65 typed 01 / 00).
 */
export function signatureReadings(account: Uint8Array, signature: Uint8Array): UserSignature[] {
  const as = (algo: UserSignature['algo'], bytes: Uint8Array): UserSignature => ({
    algo,
    encodedValue: u8aToHex(bytes),
  });
  if (isEthereumAccount(account)) {
    if (signature.length === 66 && signature[0] === 2) return [as('Ecdsa', signature.slice(1))];
    return signature.length === 65 ? [as('Ecdsa', signature)] : [];
  }
  if (signature.length === 64) return [as('Sr25519', signature), as('Ed25519', signature)];
  if (signature.length === 65 && signature[0] === 1) return [as('Sr25519', signature.slice(1))];
  if (signature.length === 65 && signature[0] === 0) return [as('Ed25519', signature.slice(1))];
  return [];
}
