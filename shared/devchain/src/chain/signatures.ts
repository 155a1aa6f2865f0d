import type { Codec } from '@polkadot/types/types';
import { ed25519Verify, sr25519Verify } from '@polkadot/util-crypto';

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

/**
 * Checks one signature over exactly `message`, with no wrapping or prefix forgiveness: the strictness of the
 * runtime (util-crypto's signatureVerify would also accept wrapped messages). Ethereum-style ECDSA keys are
 * not accepted yet.
 */
export function verifyExactly(message: Uint8Array, signature: SignatureParts, publicKey: Uint8Array): boolean {
  try {
    if (signature.type === 'Sr25519') return sr25519Verify(message, signature.bytes, publicKey);
    if (signature.type === 'Ed25519') return ed25519Verify(message, signature.bytes, publicKey);
    return false;
  } catch {
    return false;
  }
}
