import { accountIdOf, fromChain, msaIdText, type ChainQueries, type OpeningChain } from '@frequency-gateway/chain';
import { defineRoute, notFound, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';

/** An account as the routes take it: 0x + 32 bytes hex, or an SS58 address; answered as its 0x-hex AccountId32. */
export const accountIdParam = z
  .string()
  .transform((value, context) => {
    try {
      if (/^0x[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase() as `0x${string}`;
      if (!/^[1-9A-HJ-NP-Za-km-z]{46,50}$/.test(value)) throw new Error('not SS58');
      return accountIdOf(value);
    } catch {
      context.addIssue({ code: 'custom', message: 'must be an SS58 address or 0x followed by 64 hex digits' });
      return z.NEVER;
    }
  })
  .meta({
    description: 'An account: SS58 address or 32-byte hex',
    example: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY',
  });

const handleSchema = z
  .object({ base_handle: z.string(), canonical_base: z.string(), suffix: z.number().int() })
  .meta({ id: 'HandleResponseDto' });

const accountSchema = z
  .object({ msaId: z.string(), handle: handleSchema.optional() })
  .meta({ id: 'AccountResponseDto' });

const blockInfoSchema = z
  .object({
    blocknumber: z.number().int().meta({ description: 'The best (newest) block' }),
    finalized_blocknumber: z.number().int().meta({ description: 'The newest finalized block' }),
    genesis: z.string().meta({ description: 'Genesis hash of the chain' }),
    runtime_version: z.number().int().meta({ description: 'spec_version of the runtime' }),
  })
  .meta({ id: 'BlockInfoResponseDto' });

/** Account look-ups by key and by MSA id, and the chain's current blocks. */
export function accountRoutes(chain: OpeningChain, chainWaitMs: number): Route[] {
  // Look-ups answer from the finalized block: an account exists for them once its sign-up is final, not before.
  const finalizedQueries = async () => (await fromChain(() => chain.ready(chainWaitMs))).queries.atFinalized();

  const account = async (queries: ChainQueries, msaId: bigint) => {
    const handle = await queries.handleOf(msaId);
    return {
      msaId: msaId.toString(),
      ...(handle
        ? { handle: { base_handle: handle.base, canonical_base: handle.canonical, suffix: handle.suffix } }
        : {}),
    };
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v1/accounts/account/{accountId}',
      operationId: 'AccountsControllerV1_getAccountForAccountId_v1',
      summary: 'The MSA id and handle of an account key',
      description:
        'Read at the finalized block: answers 404 until the account exists there (after a sign-up, once its transaction is finalized, when the SIWF_SIGNUP webhook is sent).',
      tags: ['accounts'],
      params: z.object({ accountId: accountIdParam }),
      responses: {
        200: { description: 'The account', schema: accountSchema },
        400: { description: 'Not an account id' },
        404: { description: 'No MSA has this key in the finalized block' },
      },
      handler: async ({ params }) => {
        const queries = await fromChain(finalizedQueries);
        const msaId = await fromChain(() => queries.msaIdOf(params.accountId));
        if (msaId === undefined) throw notFound(`accountId: no MSA has the key ${params.accountId}`);
        return { status: 200, body: await fromChain(() => account(queries, msaId)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/accounts/{msaId}',
      operationId: 'AccountsControllerV1_getAccountForMsa_v1',
      summary: 'An MSA and its handle',
      description: 'Read at the finalized block.',
      tags: ['accounts'],
      params: z.object({ msaId: msaIdText().meta({ description: 'An MSA id', example: '1' }) }),
      responses: {
        200: { description: 'The account', schema: accountSchema },
        400: { description: 'Not an MSA id' },
        404: { description: 'No such MSA in the finalized block' },
      },
      handler: async ({ params }) => {
        const queries = await fromChain(finalizedQueries);
        const exists = await fromChain(() => queries.msaExists(params.msaId));
        if (!exists) throw notFound(`msaId: no MSA ${params.msaId}`);
        return { status: 200, body: await fromChain(() => account(queries, params.msaId)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/frequency/blockinfo',
      operationId: 'BlockInfoController_blockInfo_v1',
      summary: 'The best and finalized block numbers, the genesis hash and the runtime version',
      tags: ['frequency'],
      responses: {
        200: { description: 'Block information', schema: blockInfoSchema },
        503: { description: 'The chain is not reachable' },
      },
      handler: async () => {
        const { api, queries } = await fromChain(() => chain.ready(chainWaitMs));
        const [best, finalized] = await fromChain(() => Promise.all([queries.bestBlock(), queries.finalizedBlock()]));
        return {
          status: 200,
          body: {
            blocknumber: best.number,
            finalized_blocknumber: finalized.number,
            genesis: api.genesisHash.toHex(),
            runtime_version: api.runtimeVersion.specVersion.toNumber(),
          },
        };
      },
    }),
  ];
}
