import { ChainTiming, fromChain, type ChainQueries, msaIdText, type Delegation } from '@frequency-gateway/chain';
import { badRequest, defineRoute, notFound, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { accountIdParam } from './accountRoutes.js';
import { writeRoute, type WriteRouteOptions } from './writes.js';
import { transactionResponse } from './writes.js';
import {
  prepareUserTransaction,
  queueUserTransaction,
  userTransactionPayload,
  userTransactionRequest,
} from './userTransactionRoutes.js';

const delegationSchema = z
  .object({
    providerId: z.string(),
    revokedAtBlock: z.number().int().meta({ description: 'The block the delegation was revoked at; 0 while active' }),
    delegatedIntents: z.array(
      z
        .object({
          intentId: z.number().int(),
          revokedAtBlock: z
            .number()
            .int()
            .meta({ description: "When the grant ended, the delegation's revocation included; 0 while active" }),
          explicitRevokedAtBlock: z
            .number()
            .int()
            .meta({ description: 'When this grant itself was revoked, whatever the delegation; 0 if never' }),
        })
        .meta({ id: 'IntentDelegation' }),
    ),
  })
  .meta({ id: 'Delegation' });

const delegationResponse = z
  .object({ msaId: z.string(), delegations: z.array(delegationSchema) })
  .meta({ id: 'DelegationResponse' });

const asResponse = (delegation: Delegation): z.infer<typeof delegationSchema> => ({
  providerId: delegation.providerId.toString(),
  revokedAtBlock: delegation.revokedAt,
  delegatedIntents: delegation.grants.map((grant) => ({
    intentId: grant.intentId,
    revokedAtBlock: grant.revokedAt,
    explicitRevokedAtBlock: grant.explicitRevokedAt,
  })),
});

const msaIdParam = msaIdText().meta({ description: 'MSA id of the user (the delegator)', example: '3' });
const providerIdParam = msaIdText().meta({ description: 'MSA id of the provider', example: '1' });

/** Delegation look-ups (v3, by intent) and the user-signed revocation of a delegation. */
export function delegationRoutes(options: WriteRouteOptions): Route[] {
  const { chain, chainWaitMs } = options;
  // Look-ups read the finalized block; the revocation routes below check the best one, which their transaction follows.
  const finalizedQueries = async () => fromChain(async () => (await chain.ready(chainWaitMs)).queries.atFinalized());

  /** The provider's MSA, checked to exist (`missing` otherwise: 404 for a path, 400 for a body) and to be a provider. */
  const requireProvider = async (
    queries: ChainQueries,
    providerId: bigint,
    missing: (message: string) => Error = notFound,
  ) => {
    if (!(await fromChain(() => queries.msaExists(providerId)))) throw missing(`providerId: no MSA ${providerId}`);
    if (!(await fromChain(() => queries.isProvider(providerId))))
      throw badRequest(`providerId: MSA ${providerId} is not a provider`);
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v3/delegations/{msaId}',
      operationId: 'DelegationsControllerV3_getDelegation_v3',
      summary: "An MSA's delegations to every provider, with the intents each grants",
      description: 'Read at the finalized block.',
      tags: ['delegations'],
      params: z.object({ msaId: msaIdParam }),
      responses: {
        200: { description: 'The delegations (none: an empty list)', schema: delegationResponse },
        400: { description: 'Not an MSA id' },
        404: { description: 'No such MSA' },
      },
      handler: async ({ params }) => {
        const chainQueries = await finalizedQueries();
        if (!(await fromChain(() => chainQueries.msaExists(params.msaId))))
          throw notFound(`msaId: no MSA ${params.msaId}`);
        const delegations = await fromChain(() => chainQueries.delegations(params.msaId));
        return { status: 200, body: { msaId: params.msaId.toString(), delegations: delegations.map(asResponse) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v3/delegations/{msaId}/{providerId}',
      operationId: 'DelegationsControllerV3_getProviderDelegation_v3',
      summary: "An MSA's delegation to one provider",
      description: 'Read at the finalized block.',
      tags: ['delegations'],
      params: z.object({ msaId: msaIdParam, providerId: providerIdParam }),
      responses: {
        200: { description: 'The delegation, as a one-element list', schema: delegationResponse },
        400: { description: 'Not MSA ids, or the provider MSA is not a provider' },
        404: { description: 'No such MSA or provider, or no delegation between them' },
      },
      handler: async ({ params }) => {
        const chainQueries = await finalizedQueries();
        if (!(await fromChain(() => chainQueries.msaExists(params.msaId))))
          throw notFound(`msaId: no MSA ${params.msaId}`);
        await requireProvider(chainQueries, params.providerId);
        const delegation = await fromChain(() => chainQueries.delegation(params.msaId, params.providerId));
        if (!delegation) throw notFound(`MSA ${params.msaId} has never delegated to provider ${params.providerId}`);
        return { status: 200, body: { msaId: params.msaId.toString(), delegations: [asResponse(delegation)] } };
      },
    }),
    ...revocationRoutes(options, requireProvider),
  ];
}

/** GET the payload to revoke a delegation, and POST it signed. */
function revocationRoutes(
  options: WriteRouteOptions,
  requireProvider: (queries: ChainQueries, providerId: bigint, missing?: (message: string) => Error) => Promise<void>,
): Route[] {
  const { chain, chainWaitMs } = options;
  const call = (providerId: bigint) => ({ call: 'msa.revokeDelegationByDelegator' as const, providerId });

  /** The delegator's MSA, after checking that the delegation to the provider can be revoked. */
  const revocable = async (
    queries: ChainQueries,
    accountId: `0x${string}`,
    providerId: bigint,
    missing: (message: string) => Error,
  ) => {
    const msaId = await fromChain(() => queries.msaIdOf(accountId));
    if (msaId === undefined) throw missing(`accountId: ${accountId} has no MSA`);
    await requireProvider(queries, providerId, missing);
    const delegation = await fromChain(() => queries.delegation(msaId, providerId));
    if (!delegation) throw missing(`MSA ${msaId} has no delegation to provider ${providerId}`);
    if (delegation.revokedAt !== 0)
      throw badRequest(
        `the delegation of MSA ${msaId} to provider ${providerId} was revoked at block ${delegation.revokedAt}`,
      );
    return msaId;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v3/delegations/revokeDelegation/{accountId}/{providerId}',
      operationId: 'DelegationsControllerV3_getRevokeDelegationPayload_v3',
      summary: 'The transaction a user signs to revoke their delegation to a provider',
      description: `msa.revokeDelegationByDelegator(providerId) for the account, with its next nonce and an era of ${ChainTiming.DEFAULT.eraPeriod} blocks from the finalized head. The user signs \`payloadToSign\` (signRaw) with their key and POSTs it to /v3/delegations/revokeDelegation before the era ends.`,
      tags: ['delegations'],
      params: z.object({ accountId: accountIdParam, providerId: providerIdParam }),
      responses: {
        200: {
          description: 'The transaction to sign',
          schema: z
            .object({ ...userTransactionPayload, providerId: z.string() })
            .meta({ id: 'RevokeDelegationPayloadResponseDto' }),
        },
        400: { description: 'Bad ids, a provider MSA that is not a provider, or a delegation already revoked' },
        404: { description: 'The account has no MSA, no such provider, or no delegation to it' },
      },
      handler: async ({ params }) => {
        const { api, queries } = await fromChain(() => chain.ready(chainWaitMs));
        await revocable(queries, params.accountId, params.providerId, notFound);
        const prepared = await prepareUserTransaction(api, params.accountId, call(params.providerId));
        return { status: 200, body: { ...prepared, providerId: params.providerId.toString() } };
      },
    }),
    writeRoute(options, {
      method: 'post',
      path: '/v3/delegations/revokeDelegation',
      operationId: 'DelegationsControllerV3_postRevokeDelegation_v3',
      summary: 'Revoke a delegation with the transaction the user signed',
      description:
        'The body is the GET answer with the signature of `payloadToSign` added. Checked before queueing (the call, the payload, its era and nonce, the signature); the worker submits it as signed and the outcome arrives as a REVOKE_DELEGATION webhook.',
      tags: ['delegations'],
      body: z
        .object({ ...userTransactionRequest, providerId: providerIdParam })
        .meta({ id: 'RevokeDelegationPayloadRequestDto' }),
      responses: {
        201: { description: 'Queued', schema: transactionResponse },
        400: { description: 'A bad transaction or signature, or no delegation to revoke' },
      },
      handler: async ({ body }) =>
        queueUserTransaction(options, {
          type: 'REVOKE_DELEGATION',
          body,
          call: call(body.providerId),
          msaIdOf: (queries) => revocable(queries, body.accountId, body.providerId, badRequest),
        }),
    }),
  ];
}
