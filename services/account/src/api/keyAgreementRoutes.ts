import {
  accountCalls,
  chainTypeOf,
  eip712ChainIdOf,
  fromChain,
  msaIdText,
  SignedPayloads,
  type ChainApi,
  type SchemaDirectory,
} from '@frequency-gateway/chain';
import { badRequest, conflict, defineRoute, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { accountIdParam } from './accountRoutes.js';
import { writeRoute, type WriteRouteOptions } from './writes.js';
import { passedExpiration, proofSchema, queueUserCall, transactionResponse, verifiedProof } from './writes.js';

/** The intent whose itemized page holds a user's key-agreement (graph) public keys. */
export const KEY_AGREEMENT_INTENT = 'dsnp.public-key-key-agreement';

export const hexBytes = (max: number) =>
  z
    .string()
    .regex(/^0x([0-9a-fA-F]{2})+$/, 'must be 0x-prefixed hex of whole bytes')
    .refine((hex) => hex.length <= 2 + 2 * max, `must be at most ${max} bytes`)
    .transform((hex) => hex.toLowerCase() as `0x${string}`);

export const blockNumber = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 1);

const itemAction = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('ADD_ITEM'), encodedPayload: hexBytes(1024) }),
    z.object({ type: z.literal('DELETE_ITEM'), index: z.number().int().min(0).max(65535) }),
  ])
  .meta({ id: 'ItemActionDto' });

export const itemizedPayload = z
  .object({
    schemaId: z.number().int().min(1).max(65535),
    targetHash: blockNumber.meta({ description: 'The content hash of the page the actions apply to' }),
    expiration: blockNumber,
    actions: z.array(itemAction).min(1),
  })
  .meta({ id: 'ItemizedSignaturePayloadDto' });

export const chainActions = (actions: z.infer<typeof itemAction>[]) =>
  actions.map((action) =>
    action.type === 'ADD_ITEM' ? { Add: { data: action.encodedPayload } } : { Delete: { index: action.index } },
  );

/** A user's signed item actions on one of their itemized pages. */
export const itemActionsRequest = z
  .object({ accountId: accountIdParam, payload: itemizedPayload, proof: proofSchema })
  .meta({ id: 'AddNewPublicKeyAgreementRequestDto' });

/**
 * The applyItemActionsWithSignatureV2 call of a user's signed item actions, once their signature is checked
 * (a 400 naming `field` otherwise).
 */
export function itemActionsCall(
  api: ChainApi,
  accountId: `0x${string}`,
  request: z.infer<typeof itemActionsRequest>,
  field: string,
) {
  const payload = new SignedPayloads(api).itemizedV2({
    ...request.payload,
    actions: chainActions(request.payload.actions),
  });
  const chainId = eip712ChainIdOf(chainTypeOf(api.genesisHash.toHex()));
  const proof = verifiedProof(accountId, request.proof, payload, 'ItemizedSignaturePayloadV2', field, chainId);
  return accountCalls(api).build('statefulStorage.applyItemActionsWithSignatureV2', accountId, proof, payload);
}

/** The payload to add a key-agreement key, and POST /v1/keys/publicKeyAgreements. */
export function keyAgreementRoutes(options: WriteRouteOptions & { directory: SchemaDirectory }): Route[] {
  const { chain, intake, providerId, chainWaitMs, directory } = options;
  const connection = () => fromChain(() => chain.ready(chainWaitMs));
  const keyIntent = async () => {
    const intent = await fromChain(() => directory.intentByName(KEY_AGREEMENT_INTENT));
    if (intent?.latestSchemaId === undefined) throw badRequest(`this chain has no schema for ${KEY_AGREEMENT_INTENT}`);
    return { intentId: intent.intentId, schemaId: intent.latestSchemaId };
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v1/keys/publicKeyAgreements/getAddKeyPayload',
      operationId: 'KeysControllerV1_getPublicKeyAgreementsKeyPayload_v1',
      summary: 'The payload a user signs to add a key-agreement (graph) key to their itemized page',
      description: `The itemized page of ${KEY_AGREEMENT_INTENT} (latest schema), its current content hash as targetHash, and one ADD_ITEM action with the key. \`encodedPayload\` is its SCALE encoding (ItemizedSignaturePayloadV2).`,
      tags: ['keys'],
      query: z.object({ msaId: msaIdText(), newKey: hexBytes(1024).meta({ description: 'The item to add, hex' }) }),
      responses: {
        200: {
          description: 'The payload and its encoding',
          schema: z
            .object({ payload: itemizedPayload, encodedPayload: z.string() })
            .meta({ id: 'AddNewPublicKeyAgreementPayloadRequest' }),
        },
        400: { description: 'Bad msaId or newKey' },
        409: { description: 'The page already holds this key' },
      },
      handler: async ({ query }) => {
        const { api, queries, heads } = await connection();
        const { intentId, schemaId } = await keyIntent();
        const page = await fromChain(() => queries.itemizedPage(query.msaId, intentId));
        if (page.items.some((item) => item.payload.toLowerCase() === query.newKey))
          throw conflict('newKey: this key is already on the page');
        const payloads = new SignedPayloads(api);
        const payload = {
          schemaId,
          targetHash: page.contentHash,
          expiration: payloads.expiration('statefulStorage', heads().finalized),
          actions: [{ type: 'ADD_ITEM' as const, encodedPayload: query.newKey }],
        };
        const encoded = payloads.itemizedV2({ ...payload, actions: chainActions(payload.actions) });
        return { status: 200, body: { payload, encodedPayload: SignedPayloads.signingBytes(encoded).encoded } };
      },
    }),
    writeRoute(options, {
      method: 'post',
      path: '/v1/keys/publicKeyAgreements',
      operationId: 'KeysControllerV1_addNewPublicKeyAgreements_v1',
      summary: "Apply item actions (add or delete key-agreement keys) to a user's itemized page",
      description:
        'The user signs the ItemizedSignaturePayloadV2 (GET /v1/keys/publicKeyAgreements/getAddKeyPayload gives it). Checked before queueing; the outcome arrives as an ADD_PUBLIC_KEY_AGREEMENT webhook.',
      tags: ['keys'],
      body: itemActionsRequest,
      responses: {
        200: { description: 'Queued', schema: transactionResponse },
        400: { description: 'A bad signature, a key without an MSA, or a passed expiration' },
      },
      handler: async ({ body }) => {
        const { api, queries, heads } = await connection();
        const msaId = await fromChain(() => queries.msaIdOf(body.accountId));
        const problems = [
          ...(msaId === undefined ? [`accountId: ${body.accountId} has no MSA`] : []),
          ...passedExpiration(body.payload.expiration, heads().finalized),
        ];
        if (problems.length > 0) throw badRequest(problems);
        const call = itemActionsCall(api, body.accountId, body, 'proof');
        return queueUserCall(intake, providerId, {
          type: 'ADD_PUBLIC_KEY_AGREEMENT',
          identity: { accountId: body.accountId, payload: body.payload, proof: body.proof.toLowerCase() },
          accountId: body.accountId,
          msaId: msaId as bigint,
          call,
          ss58Prefix: api.registry.chainSS58 as number,
        });
      },
    }),
  ];
}
