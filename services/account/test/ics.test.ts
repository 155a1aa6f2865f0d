import { ChainQueries, SignedPayloads, type Intent } from '@frequency-gateway/chain';
import { Redis } from 'ioredis';
import { SiwfUser } from '@frequency-gateway/devstack/siwf';
import { KEYSPACE, useAccountStack } from './support/stack.js';

const stack = useAccountStack();
let intents: Record<'publicKey' | 'prid' | 'metadata', Intent>;

beforeAll(async () => {
  const queries = new ChainQueries(stack.chain.api);
  const named = async (name: string) => {
    const intent = await queries.intentByName(name);
    if (!intent?.latestSchemaId) throw new Error(`the devchain has no schema for ${name}`);
    return intent;
  };
  intents = {
    publicKey: await named('ics.public-key-key-agreement'),
    prid: await named('ics.context-group-acl'),
    metadata: await named('ics.context-group-metadata'),
  };
}, 120_000);

const randomHex = (bytes: number) =>
  `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')}` as const;

/** A publishAll body with every part, signed by `signer` for `user`'s account. */
async function publishAll(user: SiwfUser, signer: SiwfUser = user) {
  const api = stack.chain.api;
  const finalized = (await api.rpc.chain.getHeader(await api.rpc.chain.getFinalizedHead())).number.toNumber();
  const expiration = new SignedPayloads(api).expiration('statefulStorage', finalized);
  const itemized = async (intent: Intent) => {
    const payload = { schemaId: intent.latestSchemaId!, targetHash: 0, expiration, items: [randomHex(32)] };
    return {
      accountId: user.address,
      payload: { ...payload, actions: payload.items.map((item) => ({ type: 'ADD_ITEM', encodedPayload: item })) },
      proof: await signer.addItemsProof(api, payload),
    };
  };
  const page = {
    schemaId: intents.metadata.latestSchemaId!,
    pageId: 0,
    targetHash: 0,
    expiration,
    payload: randomHex(64),
  };
  return {
    addIcsPublicKeyPayload: await itemized(intents.publicKey),
    addContextGroupPRIDEntryPayload: await itemized(intents.prid),
    addContentGroupMetadataPayload: {
      accountId: user.address,
      signature: await signer.upsertPageProof(api, page),
      payload: page,
    },
  };
}

describe.each(['sr25519', 'ethereum'] as const)('ICS records of a %s user', (kind) => {
  test('publishAll: 202, one CAPACITY_BATCH webhook, both items and the page on chain', async () => {
    const { user, msaId } = await stack.register(kind);
    const body = await publishAll(user);
    const answer = await stack.call('POST', `/v1/ics/${user.address}/publishAll`, body);
    expect(answer.status).toBe(202);
    const webhook = await stack.webhookOf(answer.body.referenceId as string);
    expect(webhook).toMatchObject({
      transactionType: 'CAPACITY_BATCH',
      status: 'SUCCESS',
      msaId,
      calls: [
        { section: 'statefulStorage', method: 'applyItemActionsWithSignatureV2' },
        { section: 'statefulStorage', method: 'applyItemActionsWithSignatureV2' },
        { section: 'statefulStorage', method: 'upsertPageWithSignatureV2' },
      ],
      capacityWithdrawnEvent: { msaId: '1', amount: expect.stringMatching(/^[1-9]\d*$/) },
    });

    const queries = new ChainQueries(stack.chain.api);
    for (const [intent, part] of [
      [intents.publicKey, body.addIcsPublicKeyPayload],
      [intents.prid, body.addContextGroupPRIDEntryPayload],
    ] as const) {
      const page = await queries.itemizedPage(BigInt(msaId), intent.intentId);
      expect(page.items.map((item) => item.payload)).toEqual([part.payload.actions[0]!.encodedPayload]);
    }
    const pages = await stack.chain.api.call.statefulStorageRuntimeApi.getPaginatedStorageV2(
      msaId,
      intents.metadata.intentId,
    );
    expect(pages.asOk.map((page) => [page.pageId.toNumber(), page.payload.toHex()])).toEqual([
      [0, body.addContentGroupMetadataPayload.payload.payload],
    ]);
  }, 120_000);
});

test('publishAll refusals: nothing given 204; no MSA, another signer, another account in a part 400; nothing queued', async () => {
  const { user } = await stack.register('sr25519');
  const path = `/v1/ics/${user.address}/publishAll`;
  const redis = new Redis(stack.redis.url);
  const requestKeys = async () => (await redis.keys(`${KEYSPACE}:request:*`)).length;
  const before = await requestKeys();
  const nothing = await stack.call('POST', path, {});
  expect(nothing.status).toBe(204);

  const stranger = SiwfUser.create('sr25519');
  const noMsa = await stack.call('POST', `/v1/ics/${stranger.address}/publishAll`, await publishAll(stranger));
  expect(noMsa.status).toBe(400);
  expect((noMsa.body.message as string[])[0]).toMatch(/^accountId: 0x[0-9a-f]{64} has no MSA/);

  const forged = await stack.call('POST', path, await publishAll(user, stranger));
  expect(forged.status).toBe(400);
  expect((forged.body.message as string[])[0]).toMatch(/^addIcsPublicKeyPayload\.proof: not a signature/);

  const body = await publishAll(user);
  const mixed = await stack.call('POST', path, {
    ...body,
    addContentGroupMetadataPayload: { ...body.addContentGroupMetadataPayload, accountId: stranger.address },
  });
  expect(mixed.status).toBe(400);
  expect((mixed.body.message as string[])[0]).toMatch(/^addContentGroupMetadataPayload\.accountId: not the account/);
  expect(before).toBeGreaterThan(0);
  expect(await requestKeys()).toBe(before);
  redis.disconnect();
}, 120_000);
