import {
  bytesOfHex,
  signatureReadings,
  SignedPayloads,
  ss58Of,
  type ChainCall,
  type ChainValue,
  type Eip712Payload,
  type OpeningChain,
  type UserSignature,
} from '@frequency-gateway/chain';
import {
  badRequest,
  defineRoute,
  forbidden,
  type Intake,
  type Route,
  type RouteSpec,
} from '@frequency-gateway/platform';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import {
  transactionJobName,
  type EncodedCall,
  type TransactionJob,
  type TransactionType,
  type UserSignedTransaction,
} from '../jobs.js';
import { ACCOUNT_QUEUES } from '../queues.js';

type ObjectSchema = z.ZodType<Record<string, unknown>>;

/** What the write routes share: the chain, the intake and whether the gateway may write at all. */
export interface WriteRouteOptions {
  chain: OpeningChain;
  intake: Intake;
  providerId: string;
  /** No provider key: every write route answers 403 (see writeRoute). */
  readOnly: boolean;
  chainWaitMs: number;
}

/** Refuses every request with 403, before its input is even read, when the gateway has no provider key. */
const readOnlyGuard =
  (options: { readOnly: boolean }): RequestHandler =>
  (_req, _res, next) =>
    next(
      options.readOnly
        ? forbidden('This gateway has no provider key (PROVIDER_ACCOUNT_SEED_PHRASE) and takes no writes: read-only')
        : undefined,
    );

/** A write route: refused (and documented) with 403 while the gateway is read-only. */
export function writeRoute<
  P extends ObjectSchema | undefined = undefined,
  Q extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(options: { readOnly: boolean }, spec: RouteSpec<P, Q, B>): Route {
  return defineRoute<P, Q, B>({
    ...spec,
    middleware: [readOnlyGuard(options), ...(spec.middleware ?? [])],
    responses: { ...spec.responses, 403: { description: 'The gateway has no provider key (read-only)' } },
  });
}

/** A user's signature as the routes take it: 0x hex of 64 to 66 bytes. */
export const proofSchema = z
  .string()
  .regex(/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130}|[0-9a-fA-F]{132})$/, 'must be 0x followed by a 64 to 66 byte signature')
  .meta({
    description:
      'The signature: 64 bytes (sr25519 or ed25519), 65 bytes typed (00 ed25519, 01 sr25519) or an Ethereum signature (65 bytes, or 66 typed 02)',
  });

/**
 * The user's signature over `payload` as the chain will check it (sr25519/ed25519 over the SCALE bytes, raw or
 * `<Bytes>`-wrapped; Ethereum keys over EIP-712), or a 400 naming `field`.
 */
export function verifiedProof(
  account: `0x${string}`,
  proof: string,
  payload: ChainValue,
  kind: Eip712Payload,
  field: string,
  chainId?: number,
): UserSignature {
  const signature = signatureReadings(bytesOfHex(account), bytesOfHex(proof)).find((candidate) =>
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

export interface TransactionRequest {
  type: TransactionType;
  /** What makes two requests the same one. */
  identity: unknown;
  /** The account that signed (0x AccountId32) and its MSA. */
  accountId: `0x${string}`;
  msaId: bigint;
  /** The chain's SS58 prefix, for the account in the request record. */
  ss58Prefix: number;
}

const encoded = (call: ChainCall): EncodedCall => ({
  pallet: call.section,
  extrinsicName: call.method,
  encodedExtrinsic: call.toHex() as `0x${string}`,
});

/**
 * Queues a transaction job: user-signed `calls` the provider submits with Capacity, or a transaction the user
 * signed themselves. Answers with the request's id and state.
 */
export async function queueTransaction(
  intake: Intake,
  providerId: string,
  request: TransactionRequest,
  work: { calls: ChainCall[] } | { userSigned: UserSignedTransaction },
) {
  const { type, accountId } = request;
  const calls = 'calls' in work ? work.calls.map(encoded) : undefined;
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
      ...(calls ? { calls } : { userSigned: (work as { userSigned: UserSignedTransaction }).userSigned }),
    }),
    details: {
      msaId: request.msaId.toString(),
      accountId: ss58Of(accountId, request.ss58Prefix),
      ...(calls ? { calls: calls.map((call) => ({ section: call.pallet, method: call.extrinsicName })) } : {}),
    },
  });
  return { referenceId: accepted.referenceId, state: accepted.state };
}

/** Queues one user-signed call for the provider to submit with Capacity; the answer of a write route. */
export async function queueUserCall(
  intake: Intake,
  providerId: string,
  request: TransactionRequest & { call: ChainCall },
) {
  return { status: 200, body: await queueTransaction(intake, providerId, request, { calls: [request.call] }) };
}

/** The problem with an expiration the chain has already passed, if it has. */
export const passedExpiration = (expiration: number, finalized: number, field = 'payload.expiration') =>
  expiration <= finalized ? [`${field}: block ${expiration} has passed (finalized: ${finalized})`] : [];
