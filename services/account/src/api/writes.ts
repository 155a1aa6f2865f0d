import { isEthereumAccount, SignedPayloads, type Eip712Payload, type UserSignature } from '@frequency-gateway/chain';
import { badRequest, type Intake } from '@frequency-gateway/platform';
import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { encodeAddress } from '@polkadot/util-crypto';
import { z } from 'zod';
import { transactionJobName, type TransactionJob, type TransactionType } from '../jobs.js';
import { ACCOUNT_QUEUES } from '../queues.js';

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

export interface UserCallRequest {
  type: TransactionType;
  /** What makes two requests the same one. */
  identity: unknown;
  /** The account that signed (0x AccountId32) and its MSA. */
  accountId: `0x${string}`;
  msaId: bigint;
  call: Call;
  /** The chain's SS58 prefix, for the account in the request record. */
  ss58Prefix: number;
}

/** Queues one user-signed call for the provider to submit with Capacity; the answer of a write route. */
export async function queueUserCall(intake: Intake, providerId: string, request: UserCallRequest) {
  const { type, call, accountId } = request;
  const accepted = await intake.accept<TransactionJob>({
    kind: type,
    identity: request.identity,
    queue: ACCOUNT_QUEUES.transactionPublish,
    jobName: transactionJobName,
    job: (referenceId) => ({
      type,
      referenceId,
      providerId,
      accountId,
      calls: [{ pallet: call.section, extrinsicName: call.method, encodedExtrinsic: call.toHex() as `0x${string}` }],
    }),
    msaId: request.msaId.toString(),
    details: { accountId: encodeAddress(accountId, request.ss58Prefix) },
  });
  return { status: 200, body: { referenceId: accepted.referenceId, state: accepted.state } };
}

/** The problem with an expiration the chain has already passed, if it has. */
export const passedExpiration = (expiration: number, finalized: number, field = 'payload.expiration') =>
  expiration <= finalized ? [`${field}: block ${expiration} has passed (finalized: ${finalized})`] : [];
