import { SignedPayloads } from '@frequency-gateway/chain';
import { SiwfUser } from '@frequency-gateway/devstack/siwf';
import { useAccountStack } from './support/stack.js';

const stack = useAccountStack();

/** The body of POST /v1/keys/add: the owner and the new key both sign the AddKeyData payload. */
async function addKeyRequest(owner: SiwfUser, msaId: string, newKey: SiwfUser) {
  const api = stack.chain.api;
  const finalized = (await api.rpc.chain.getHeader(await api.rpc.chain.getFinalizedHead())).number.toNumber();
  const payload = {
    msaId: BigInt(msaId),
    expiration: new SignedPayloads(api).expiration('msa', finalized),
    newPublicKey: newKey.accountId,
  };
  return {
    msaOwnerAddress: owner.address,
    msaOwnerSignature: await owner.addKeyProof(api, payload),
    newKeyOwnerSignature: await newKey.addKeyProof(api, payload),
    payload: { ...payload, msaId },
  };
}

describe.each(['sr25519', 'ethereum'] as const)('keys of a %s user', (kind) => {
  let owner: SiwfUser;
  let msaId: string;
  beforeAll(async () => ({ user: owner, msaId } = await stack.register(kind)), 90_000);

  test('POST /v1/keys/add adds a second key: ADD_KEY webhook, then GET /v1/keys/{msaId} lists both', async () => {
    const before = await stack.call('GET', `/v1/keys/${msaId}`);
    expect(before.body.msaKeys).toEqual([owner.address]);
    const newKey = SiwfUser.create(kind);
    const answer = await stack.call('POST', '/v1/keys/add', await addKeyRequest(owner, msaId, newKey));
    expect(answer.status).toBe(200);
    const body = await stack.webhookOf(answer.body.referenceId as string);
    expect(body).toMatchObject({ transactionType: 'ADD_KEY', status: 'SUCCESS', msaId, newPublicKey: newKey.address });
    const after = await stack.call('GET', `/v1/keys/${msaId}`);
    expect((after.body.msaKeys as string[]).sort()).toEqual([owner.address, newKey.address].sort());
    expect((await stack.chain.api.query.msa.publicKeyToMsaId(newKey.accountId)).unwrap().toString()).toBe(msaId);
  }, 90_000);

  test('refused: the new key did not sign, or the owner key is not of that MSA', async () => {
    const newKey = SiwfUser.create(kind);
    const request = await addKeyRequest(owner, msaId, newKey);
    const forged = await stack.call('POST', '/v1/keys/add', {
      ...request,
      newKeyOwnerSignature: request.msaOwnerSignature,
    });
    expect(forged.status).toBe(400);
    expect(String((forged.body.message as string[])[0])).toMatch(/^newKeyOwnerSignature: not a signature/);
    const stranger = SiwfUser.create('sr25519');
    const notOwner = await stack.call('POST', '/v1/keys/add', { ...request, msaOwnerAddress: stranger.address });
    expect(notOwner.status).toBe(400);
    expect((notOwner.body.message as string[])[0]).toMatch(/^msaOwnerAddress: .* is not a key of MSA/);
  });
});

test('GET /v1/keys/{msaId} of an MSA that does not exist: 404; not an MSA id: 400', async () => {
  expect((await stack.call('GET', '/v1/keys/999999')).status).toBe(404);
  expect((await stack.call('GET', '/v1/keys/abc')).status).toBe(400);
});

describe.each(['sr25519', 'ethereum'] as const)('key-agreement keys of a %s user', (kind) => {
  test('the payload from the gateway, signed and posted: ADD_PUBLIC_KEY_AGREEMENT webhook, the item on chain, then 409', async () => {
    const { user, msaId } = await stack.register(kind);
    const newKey = `0x40${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as const;
    const offer = await stack.call(
      'GET',
      `/v1/keys/publicKeyAgreements/getAddKeyPayload?msaId=${msaId}&newKey=${newKey}`,
    );
    expect(offer.status).toBe(200);
    const payload = offer.body.payload as { schemaId: number; targetHash: number; expiration: number };
    expect(offer.body.payload).toMatchObject({ actions: [{ type: 'ADD_ITEM', encodedPayload: newKey }] });
    const proof = await user.addItemsProof(stack.chain.api, { ...payload, items: [newKey] });
    const answer = await stack.call('POST', '/v1/keys/publicKeyAgreements', {
      accountId: user.address,
      payload: offer.body.payload,
      proof,
    });
    expect(answer.status).toBe(200);
    const body = await stack.webhookOf(answer.body.referenceId as string);
    expect(body).toMatchObject({ transactionType: 'ADD_PUBLIC_KEY_AGREEMENT', status: 'SUCCESS', msaId });
    const again = await stack.call(
      'GET',
      `/v1/keys/publicKeyAgreements/getAddKeyPayload?msaId=${msaId}&newKey=${newKey}`,
    );
    expect(again.status).toBe(409);
  }, 120_000);
});

test('a key-agreement request signed over other actions is 400 naming the proof', async () => {
  const { user, msaId } = await stack.register('sr25519');
  const newKey = `0x40${'11'.repeat(32)}` as const;
  const offer = await stack.call(
    'GET',
    `/v1/keys/publicKeyAgreements/getAddKeyPayload?msaId=${msaId}&newKey=${newKey}`,
  );
  const payload = offer.body.payload as { schemaId: number; targetHash: number; expiration: number };
  const proof = await user.addItemsProof(stack.chain.api, { ...payload, items: [`0x40${'22'.repeat(32)}`] });
  const answer = await stack.call('POST', '/v1/keys/publicKeyAgreements', { accountId: user.address, payload, proof });
  expect(answer.status).toBe(400);
}, 120_000);
