import { isEthereumAccount, SignedPayloads, type Eip712Payload, type UserSignature } from '@frequency-gateway/chain';
import { badRequest } from '@frequency-gateway/platform';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { z } from 'zod';

/** A user's signature as the routes take it: 0x hex of 64 to 66 bytes. */
export const proofSchema = z
  .string()
  .regex(/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130}|[0-9a-fA-F]{132})$/, 'must be 0x followed by a 64 to 66 byte signature')
  .meta({
    description:
      'The signature: 64 bytes (sr25519 or ed25519), 65 bytes typed (00 ed25519, 01 sr25519) or an Ethereum signature (65 bytes, or 66 typed 02)',
  });

/** The ways a signature's bytes can be read for an account, most likely first. */
function readings(account: Uint8Array, proof: Uint8Array): UserSignature[] {
  const as = (algo: UserSignature['algo'], bytes: Uint8Array): UserSignature => ({
    algo,
    encodedValue: u8aToHex(bytes),
  });
  if (isEthereumAccount(account)) {
    if (proof.length === 66 && proof[0] === 2) return [as('Ecdsa', proof.slice(1))];
    return proof.length === 65 ? [as('Ecdsa', proof)] : [];
  }
  if (proof.length === 64) return [as('Sr25519', proof), as('Ed25519', proof)];
  if (proof.length === 65 && proof[0] === 1) return [as('Sr25519', proof.slice(1))];
  if (proof.length === 65 && proof[0] === 0) return [as('Ed25519', proof.slice(1))];
  return [];
}

/**
 * The user's signature over `payload` as the chain will check it (sr25519/ed25519 over the SCALE bytes, raw or
 * `<Bytes>`-wrapped; Ethereum keys over EIP-712), or a 400 naming `field`.
 */
export function verifiedProof(
  account: `0x${string}`,
  proof: string,
  payload: Codec,
  kind: Eip712Payload,
  field: string,
  chainId?: number,
): UserSignature {
  const signature = readings(hexToU8a(account), hexToU8a(proof)).find((candidate) =>
    SignedPayloads.verify(account, candidate, payload, kind, chainId),
  );
  if (!signature) throw badRequest(`${field}: not a signature of the payload by ${account}`);
  return signature;
}

/** What a write route answers: the request's id and state. */
export const transactionResponse = z
  .object({
    referenceId: z.string().meta({ description: 'Follow it at /v1/requests/{referenceId}; webhooks carry it' }),
    state: z.string().meta({ description: 'The request state now' }),
  })
  .meta({ id: 'TransactionResponse' });
