import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aConcat } from '@polkadot/util';
import { signatureParts, verifyExactly } from '../chain/signatures.js';
import type { AccountHex } from '../runtime/context.js';

const OPEN = stringToU8a('<Bytes>');
const CLOSE = stringToU8a('</Bytes>');

/**
 * A user's signature over a SCALE payload, as the runtime's check_signature accepts it: over the raw bytes,
 * or (sr25519 and ed25519) over the bytes wrapped in `<Bytes>…</Bytes>` as polkadot-js signRaw produces.
 */
export function verifyPayloadSignature(signer: AccountHex, signature: Codec, payload: Uint8Array): boolean {
  const parts = signatureParts(signature);
  const key = hexToU8a(signer);
  if (verifyExactly(payload, parts, key)) return true;
  return parts.type !== 'Ecdsa' && verifyExactly(u8aConcat(OPEN, payload, CLOSE), parts, key);
}
