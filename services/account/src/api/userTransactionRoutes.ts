import {
  ChainTiming,
  fromChain,
  UserTransactionError,
  UserTransactions,
  type ChainApi,
  type ChainQueries,
  type UserCall,
} from '@frequency-gateway/chain';
import { badRequest, defineRoute, notFound, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import type { TransactionType } from '../jobs.js';
import { accountIdParam } from './accountRoutes.js';
import { writeRoute, type WriteRouteOptions } from './writes.js';
import { proofSchema, queueTransaction, transactionResponse } from './writes.js';

const hex = (description: string) =>
  z
    .string()
    .regex(/^0x([0-9a-fA-F]{2})+$/, 'must be 0x-prefixed hex of whole bytes')
    .transform((value) => value.toLowerCase() as `0x${string}`)
    .meta({ description });

/** What a user is given to sign a transaction of their own. */
export const userTransactionPayload = {
  accountId: z.string().meta({ description: 'The account that signs, 32-byte hex' }),
  encodedExtrinsic: z.string().meta({ description: 'The unsigned extrinsic, hex' }),
  payloadToSign: z.string().meta({
    description: `The exact bytes to sign (as a wallet signRaw receives them), hex; valid for ${ChainTiming.DEFAULT.eraPeriod} blocks`,
  }),
};

/** The same transaction sent back signed. */
export const userTransactionRequest = {
  accountId: accountIdParam,
  encodedExtrinsic: hex('The unsigned extrinsic, as the GET answer gave it'),
  payloadToSign: hex('The payload, as the GET answer gave it'),
  signature: proofSchema,
};

/** The unsigned extrinsic of `call` for the account and the payload its key signs. */
export async function prepareUserTransaction(api: ChainApi, accountId: `0x${string}`, call: UserCall) {
  const prepared = await fromChain(() => new UserTransactions(api).prepare(accountId, call));
  return { accountId, ...prepared };
}

/**
 * Checks a transaction the user signed (the expected call, a payload of this chain whose era and nonce are still
 * good, the account's signature over it) and queues it for the worker to submit exactly as signed; 201.
 */
export async function queueUserTransaction(
  options: WriteRouteOptions,
  request: {
    type: TransactionType;
    body: {
      accountId: `0x${string}`;
      encodedExtrinsic: `0x${string}`;
      payloadToSign: `0x${string}`;
      signature: string;
    };
    call: UserCall;
    /** The signer's MSA, once the request's own preconditions hold (throws the 4xx otherwise). */
    msaIdOf: (queries: ChainQueries) => Promise<bigint>;
  },
) {
  const { chain, chainWaitMs, intake, providerId } = options;
  const { api, queries } = await fromChain(() => chain.ready(chainWaitMs));
  const msaId = await request.msaIdOf(queries);
  const { body } = request;
  try {
    await fromChain(() => new UserTransactions(api).check(body, request.call));
  } catch (error) {
    if (error instanceof UserTransactionError) throw badRequest(error.problems);
    throw error;
  }
  const queued = await queueTransaction(
    intake,
    providerId,
    {
      type: request.type,
      identity: { accountId: body.accountId, payloadToSign: body.payloadToSign },
      accountId: body.accountId,
      msaId,
      ss58Prefix: api.registry.chainSS58 as number,
    },
    {
      userSigned: {
        encodedExtrinsic: body.encodedExtrinsic,
        payloadToSign: body.payloadToSign,
        signature: body.signature,
      },
    },
  );
  return { status: 201, body: queued };
}

/** Retiring an MSA: GET the transaction the user signs, POST it signed. */
export function retirementRoutes(options: WriteRouteOptions): Route[] {
  const { chain, chainWaitMs } = options;
  const retire: UserCall = { call: 'msa.retireMsa' };
  const msaIdOf = async (queries: ChainQueries, accountId: `0x${string}`, missing: (message: string) => Error) => {
    const msaId = await fromChain(() => queries.msaIdOf(accountId));
    if (msaId === undefined) throw missing(`accountId: ${accountId} has no MSA`);
    return msaId;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v1/accounts/retireMsa/{accountId}',
      operationId: 'AccountsControllerV1_getRetireMsaPayload_v1',
      summary: 'The transaction a user signs to retire their MSA',
      description: `msa.retireMsa() for the account, with its next nonce and an era of ${ChainTiming.DEFAULT.eraPeriod} blocks from the finalized head. The user signs \`payloadToSign\` (signRaw) and POSTs it to /v1/accounts/retireMsa before the era ends. The chain retires only an MSA with one key, no handle and no active delegation, that is not a provider.`,
      tags: ['accounts'],
      params: z.object({ accountId: accountIdParam }),
      responses: {
        200: {
          description: 'The transaction to sign',
          schema: z.object(userTransactionPayload).meta({ id: 'RetireMsaPayloadResponseDto' }),
        },
        400: { description: 'Not an account id' },
        404: { description: 'The account has no MSA' },
      },
      handler: async ({ params }) => {
        const { api, queries } = await fromChain(() => chain.ready(chainWaitMs));
        await msaIdOf(queries, params.accountId, notFound);
        return { status: 200, body: await prepareUserTransaction(api, params.accountId, retire) };
      },
    }),
    writeRoute(options, {
      method: 'post',
      path: '/v1/accounts/retireMsa',
      operationId: 'AccountsControllerV1_postRetireMsa_v1',
      summary: 'Retire an MSA with the transaction the user signed',
      description:
        'The body is the GET answer with the signature of `payloadToSign` added. Checked before queueing (the call, the payload, its era and nonce, the signature); the worker submits it as signed and the outcome arrives as a RETIRE_MSA webhook.',
      tags: ['accounts'],
      body: z.object(userTransactionRequest).meta({ id: 'RetireMsaRequestDto' }),
      responses: {
        201: { description: 'Queued', schema: transactionResponse },
        400: { description: 'A bad transaction or signature, or an account without an MSA' },
      },
      handler: async ({ body }) =>
        queueUserTransaction(options, {
          type: 'RETIRE_MSA',
          body,
          call: retire,
          msaIdOf: (queries) => msaIdOf(queries, body.accountId, badRequest),
        }),
    }),
  ];
}
