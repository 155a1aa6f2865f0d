import {
  accountCalls,
  chainTypeOf,
  eip712ChainIdOf,
  fromChain,
  msaIdText,
  SignedPayloads,
  ss58Of,
} from '@frequency-gateway/chain';
import { badRequest, defineRoute, notFound, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { accountIdParam } from './accountRoutes.js';
import { writeRoute, type WriteRouteOptions } from './writes.js';
import { passedExpiration, proofSchema, queueUserCall, transactionResponse, verifiedProof } from './writes.js';

const addKeyPayload = z
  .object({
    msaId: msaIdText().meta({ description: 'The MSA the key joins' }),
    expiration: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1),
    newPublicKey: accountIdParam.meta({ description: 'The key to add: SS58 or 32-byte hex' }),
  })
  .meta({ id: 'KeysRequestPayloadDto' });

const addKeyRequest = z
  .object({
    msaOwnerAddress: accountIdParam.meta({ description: 'A key of the MSA, whose owner signs' }),
    msaOwnerSignature: proofSchema,
    newKeyOwnerSignature: proofSchema,
    payload: addKeyPayload,
  })
  .meta({ id: 'KeysRequestDto' });

/** POST /v1/keys/add and GET /v1/keys/{msaId}. */
export function keyRoutes(options: WriteRouteOptions): Route[] {
  const { chain, intake, providerId, chainWaitMs } = options;
  const connection = () => fromChain(() => chain.ready(chainWaitMs));
  return [
    writeRoute(options, {
      method: 'post',
      path: '/v1/keys/add',
      operationId: 'KeysControllerV1_addKey_v1',
      summary: "Add a key to a user's MSA",
      description:
        'Both the MSA owner and the new key sign the same AddKeyData payload {msaId, expiration, newPublicKey}: sr25519 or ed25519 over its SCALE bytes (raw or wrapped), Ethereum keys as EIP-712 typed data. Checked before queueing; the outcome arrives as an ADD_KEY webhook.',
      tags: ['keys'],
      body: addKeyRequest,
      responses: {
        200: { description: 'Queued', schema: transactionResponse },
        400: { description: 'A bad signature, an MSA the owner key does not control, or a passed expiration' },
      },
      handler: async ({ body }) => {
        const { api, queries, heads } = await connection();
        const owner = await fromChain(() => queries.msaIdOf(body.msaOwnerAddress));
        const problems = [
          ...(owner === body.payload.msaId
            ? []
            : [`msaOwnerAddress: ${body.msaOwnerAddress} is not a key of MSA ${body.payload.msaId}`]),
          ...passedExpiration(body.payload.expiration, heads().finalized),
        ];
        if (problems.length > 0) throw badRequest(problems);
        const payload = new SignedPayloads(api).addKeyData(body.payload);
        const chainId = eip712ChainIdOf(chainTypeOf(api.genesisHash.toHex()));
        const ownerProof = verifiedProof(
          body.msaOwnerAddress,
          body.msaOwnerSignature,
          payload,
          'AddKeyData',
          'msaOwnerSignature',
          chainId,
        );
        const newKeyProof = verifiedProof(
          body.payload.newPublicKey,
          body.newKeyOwnerSignature,
          payload,
          'AddKeyData',
          'newKeyOwnerSignature',
          chainId,
        );
        const call = accountCalls(api).addPublicKeyToMsa(body.msaOwnerAddress, ownerProof, newKeyProof, payload);
        return queueUserCall(intake, providerId, {
          type: 'ADD_KEY',
          identity: {
            payload: body.payload,
            msaOwnerSignature: body.msaOwnerSignature.toLowerCase(),
            newKeyOwnerSignature: body.newKeyOwnerSignature.toLowerCase(),
          },
          accountId: body.msaOwnerAddress,
          msaId: body.payload.msaId,
          call,
          ss58Prefix: api.registry.chainSS58 as number,
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/keys/{msaId}',
      operationId: 'KeysControllerV1_getKeys_v1',
      summary: 'The keys of an MSA (SS58)',
      description: 'As of the finalized block (the node answers from its index of finalized blocks).',
      tags: ['keys'],
      params: z.object({ msaId: msaIdText() }),
      responses: {
        200: {
          description: 'Its keys',
          schema: z.object({ msaKeys: z.array(z.string()) }).meta({ id: 'KeysResponse' }),
        },
        404: { description: 'No MSA with keys has this id' },
      },
      handler: async ({ params }) => {
        const { api, queries } = await connection();
        const keys = await fromChain(() => queries.keysOf(params.msaId));
        if (keys.length === 0) throw notFound(`msaId: no keys for MSA ${params.msaId}`);
        return {
          status: 200,
          body: { msaKeys: keys.map((key) => ss58Of(key, api.registry.chainSS58)) },
        };
      },
    }),
  ];
}
