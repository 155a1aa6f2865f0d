import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aConcat } from '@polkadot/util';
import { signatureParts, verifyExactly, type SignatureParts } from './verify.js';
import { DEV_CHAIN_ID, eip712Message, type Eip712Payload } from './eip712.js';

/** An AccountId32 as 0x-hex. */
type AccountHex = `0x${string}`;

const OPEN = stringToU8a('<Bytes>');
const CLOSE = stringToU8a('</Bytes>');

/**
 * A user's signature over a payload, as the runtime's check_signature accepts it: over the SCALE bytes (for
 * ECDSA keys also their EIP-191 form); sr25519 and ed25519 also over the bytes wrapped in `<Bytes>…</Bytes>`
 * as polkadot-js signRaw produces; ECDSA keys also over the payload's EIP-712 typed-data message.
 */
export function verifyPayloadSignature(
  signer: AccountHex,
  signature: Codec | SignatureParts,
  payload: Codec,
  kind: Eip712Payload,
  chainId = DEV_CHAIN_ID,
): boolean {
  const parts =
    'bytes' in signature && 'type' in signature && signature.bytes instanceof Uint8Array
      ? (signature as SignatureParts)
      : signatureParts(signature as Codec);
  const account = hexToU8a(signer);
  const bytes = payload.toU8a();
  // Wallets sign sr25519/ed25519 payloads wrapped (signRaw), so that form is tried first.
  if (parts.type !== 'Ecdsa')
    return verifyExactly(u8aConcat(OPEN, bytes, CLOSE), parts, account) || verifyExactly(bytes, parts, account);
  return verifyExactly(bytes, parts, account) || verifyExactly(eip712Message(kind, payload, chainId), parts, account);
}
