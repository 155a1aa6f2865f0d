import {
  accountCalls,
  chainTypeOf,
  eip712ChainIdOf,
  fromChain,
  msaIdText,
  SignedPayloads,
} from '@frequency-gateway/chain';
import { badRequest, defineRoute, notFound, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import type { TransactionType } from '../jobs.js';
import { accountIdParam } from './accountRoutes.js';
import {
  passedExpiration,
  proofSchema,
  queueUserCall,
  writeRoute,
  transactionResponse,
  verifiedProof,
  type WriteRouteOptions,
} from './writes.js';

const handlePayload = z
  .object({
    baseHandle: z.string().min(3, 'must be at least 3 characters').max(256),
    expiration: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .meta({ description: 'Block number after which the signature is void' }),
  })
  .meta({ id: 'HandlePayloadDto' });

const handleRequest = z
  .object({ accountId: accountIdParam, payload: handlePayload, proof: proofSchema })
  .meta({ id: 'HandleRequestDto' });

const handleResponse = z
  .object({ base_handle: z.string(), canonical_base: z.string(), suffix: z.number().int() })
  .meta({ id: 'HandleResponseDto' });

/** POST /v1/handles and /v1/handles/change, the payload to sign for a change, and a user's handle. */
export function handleRoutes(options: WriteRouteOptions): Route[] {
  const { chain, intake, providerId, chainWaitMs } = options;
  const connection = () => fromChain(() => chain.ready(chainWaitMs));

  const write = (type: Extract<TransactionType, 'CREATE_HANDLE' | 'CHANGE_HANDLE'>) =>
    writeRoute(options, {
      method: 'post',
      path: type === 'CREATE_HANDLE' ? '/v1/handles' : '/v1/handles/change',
      operationId:
        type === 'CREATE_HANDLE' ? 'HandlesControllerV1_createHandle_v1' : 'HandlesControllerV1_changeHandle_v1',
      summary: type === 'CREATE_HANDLE' ? "Claim a handle for a user's MSA" : "Change a user's handle",
      description:
        'The user signs the ClaimHandlePayload (GET /v1/handles/change/{newHandle} gives it ready to sign). Handle, signature and MSA are checked before anything is queued; the provider submits the transaction with Capacity and the outcome arrives by webhook and at /v1/requests/{referenceId}.',
      tags: ['handles'],
      body: handleRequest,
      responses: {
        200: { description: 'Queued', schema: transactionResponse },
        400: { description: 'An invalid handle, signature or expiration, or a key without an MSA' },
        503: { description: 'The chain or Redis is not reachable' },
      },
      handler: async ({ body }) => {
        const { api, queries, heads } = await connection();
        const [valid, msaId] = await fromChain(() =>
          Promise.all([queries.isValidHandle(body.payload.baseHandle), queries.msaIdOf(body.accountId)]),
        );
        const problems = [
          ...(valid ? [] : [`payload.baseHandle: ${JSON.stringify(body.payload.baseHandle)} is not a valid handle`]),
          ...(msaId === undefined ? [`accountId: ${body.accountId} has no MSA`] : []),
          ...passedExpiration(body.payload.expiration, heads().finalized),
        ];
        if (problems.length > 0) throw badRequest(problems);
        const payload = new SignedPayloads(api).claimHandle(body.payload);
        const chainId = eip712ChainIdOf(chainTypeOf(api.genesisHash.toHex()));
        const proof = verifiedProof(body.accountId, body.proof, payload, 'ClaimHandlePayload', 'proof', chainId);
        const call = accountCalls(api).build(
          type === 'CREATE_HANDLE' ? 'handles.claimHandle' : 'handles.changeHandle',
          body.accountId,
          proof,
          payload,
        );
        return queueUserCall(intake, providerId, {
          type: type,
          identity: { accountId: body.accountId, payload: body.payload, proof: body.proof.toLowerCase() },
          accountId: body.accountId,
          msaId: msaId as bigint,
          call,
          ss58Prefix: api.registry.chainSS58 as number,
        });
      },
    });

  return [
    write('CREATE_HANDLE'),
    write('CHANGE_HANDLE'),
    defineRoute({
      method: 'get',
      path: '/v1/handles/change/{newHandle}',
      operationId: 'HandlesControllerV1_getChangeHandlePayload_v1',
      summary: 'The payload a user signs to claim or change to a handle',
      description:
        '`encodedPayload` is the SCALE encoding of the ClaimHandlePayload; wallets sign it wrapped in `<Bytes>…</Bytes>` (sr25519) or as EIP-712 typed data (Ethereum keys). The expiration leaves half the chain’s window for signing and submission.',
      tags: ['handles'],
      params: z.object({ newHandle: z.string().min(3, 'must be at least 3 characters').max(256) }),
      responses: {
        200: {
          description: 'The payload and its encoding',
          schema: z
            .object({ payload: handlePayload, encodedPayload: z.string() })
            .meta({ id: 'ChangeHandlePayloadRequest' }),
        },
        400: { description: 'Not a valid handle' },
      },
      handler: async ({ params }) => {
        const { api, queries, heads } = await connection();
        if (!(await fromChain(() => queries.isValidHandle(params.newHandle))))
          throw badRequest(`newHandle: ${JSON.stringify(params.newHandle)} is not a valid handle`);
        const payloads = new SignedPayloads(api);
        const payload = { baseHandle: params.newHandle, expiration: payloads.expiration('handles', heads().finalized) };
        return {
          status: 200,
          body: { payload, encodedPayload: SignedPayloads.signingBytes(payloads.claimHandle(payload)).encoded },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/handles/{msaId}',
      operationId: 'HandlesControllerV1_getHandle_v1',
      summary: "An MSA's handle",
      description: 'Read at the finalized block: a handle claimed or changed shows once its transaction is finalized.',
      tags: ['handles'],
      params: z.object({ msaId: msaIdText() }),
      responses: {
        200: { description: 'The handle', schema: handleResponse },
        400: { description: 'Not an MSA id' },
        404: { description: 'No such MSA, or it has no handle in the finalized block' },
      },
      handler: async ({ params }) => {
        const { queries } = await connection();
        const handle = await fromChain(async () => (await queries.atFinalized()).handleOf(params.msaId));
        if (!handle) throw notFound(`msaId: MSA ${params.msaId} has no handle`);
        return {
          status: 200,
          body: { base_handle: handle.base, canonical_base: handle.canonical, suffix: handle.suffix },
        };
      },
    }),
  ];
}
