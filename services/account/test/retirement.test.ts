import { waitUntil } from '@frequency-gateway/devstack';
import { SiwfUser } from '@frequency-gateway/devstack/siwf';
import { useAccountStack } from './support/stack.js';
import { submitAsAlice } from './support/submit.js';

const stack = useAccountStack();

/** The GET answer signed by the user, as the POST takes it. */
async function signed(user: SiwfUser, path: string): Promise<Record<string, unknown>> {
  const offer = await stack.call('GET', path);
  expect(offer.status).toBe(200);
  const { payloadToSign } = offer.body as { payloadToSign: `0x${string}` };
  return { ...offer.body, signature: user.signTransactionPayload(payloadToSign) };
}

const delegationOf = async (msaId: string) => {
  const answer = await stack.call('GET', `/v3/delegations/${msaId}/1`);
  expect(answer.status).toBe(200);
  return (answer.body.delegations as { revokedAtBlock: number; delegatedIntents: unknown[] }[])[0]!;
};

describe('delegation look-ups', () => {
  test('GET /v3/delegations/{msaId} and /{msaId}/{providerId}: the sign-up delegation to provider 1, by intent', async () => {
    const { msaId } = await stack.register('sr25519');
    const all = await stack.call('GET', `/v3/delegations/${msaId}`);
    expect(all.status).toBe(200);
    expect(all.body.msaId).toBe(msaId);
    const delegations = all.body.delegations as { providerId: string; revokedAtBlock: number }[];
    expect(delegations).toHaveLength(1);
    expect(delegations[0]).toMatchObject({ providerId: '1', revokedAtBlock: 0 });
    // The same as the chain's own answer.
    const chain = await stack.chain.api.call.msaRuntimeApi.getAllGrantedDelegationsByMsaId(msaId);
    const intents = chain[0]!.permissions.map((grant) => grant.grantedId.toNumber());
    expect((await delegationOf(msaId)).delegatedIntents).toEqual(
      intents.map((intentId) => ({ intentId, revokedAtBlock: 0, explicitRevokedAtBlock: 0 })),
    );
    expect(intents.length).toBeGreaterThan(0);
  }, 90_000);

  test('errors: no such MSA 404, not an MSA id 400, a provider id that is no provider 400, none 404', async () => {
    const { msaId } = await stack.register('sr25519');
    const { msaId: other } = await stack.register('sr25519');
    expect((await stack.call('GET', '/v3/delegations/999999')).status).toBe(404);
    expect((await stack.call('GET', '/v3/delegations/abc')).status).toBe(400);
    const notProvider = await stack.call('GET', `/v3/delegations/${msaId}/${other}`);
    expect(notProvider.status).toBe(400);
    expect(String((notProvider.body.message as string[])[0])).toMatch(/^providerId: MSA \d+ is not a provider/);
    expect((await stack.call('GET', `/v3/delegations/${msaId}/999999`)).status).toBe(404);
    const stranger = SiwfUser.create('sr25519');
    expect((await stack.call('GET', `/v3/delegations/revokeDelegation/${stranger.address}/1`)).status).toBe(404);
    expect((await stack.call('GET', `/v1/accounts/retireMsa/${stranger.address}`)).status).toBe(404);
  }, 120_000);
});

describe.each(['sr25519', 'ethereum'] as const)('a %s user revokes their delegation, then retires', (kind) => {
  let user: SiwfUser;
  let msaId: string;
  /** The retirement refused while the user was delegated; its nonce has been used since. */
  let refused: Record<string, unknown>;
  beforeAll(async () => {
    ({ user, msaId } = await stack.register(kind));
    // The key holds tokens, so each signed call writes its nonce. (A Frequency node leaves the nonce of a free call
    // unwritten when the account does not exist: without tokens, the refused retirement would stay good.)
    const transfer = stack.chain.api.tx.balances.transferKeepAlive(user.accountId, 10n ** 12n);
    expect(await submitAsAlice(transfer)).toContain('balances.Transfer');
  }, 90_000);

  test('retiring while delegated: checked and queued, refused by the chain, FAILED webhook', async () => {
    refused = await signed(user, `/v1/accounts/retireMsa/${user.accountId}`);
    const answer = await stack.call('POST', '/v1/accounts/retireMsa', refused);
    expect(answer.status).toBe(201);
    const webhook = await stack.webhookOf(answer.body.referenceId as string);
    expect(webhook).toMatchObject({ transactionType: 'RETIRE_MSA', status: 'FAILED' });
    expect(String((webhook.error as { message: string }).message)).toMatch(/refused/);
    const status = await stack.call('GET', `/v1/requests/${answer.body.referenceId as string}`);
    expect(status.body.state).toBe('failed');
    expect((await stack.chain.api.query.msa.publicKeyToMsaId(user.accountId)).unwrap().toString()).toBe(msaId);
  }, 90_000);

  test('revocation: refused forms (400), then the signed payload: REVOKE_DELEGATION webhook and revoked on chain', async () => {
    const path = `/v3/delegations/revokeDelegation/${user.address}/1`;
    const request = await signed(user, path);
    expect(request).toMatchObject({ accountId: user.accountId, providerId: '1' });
    expect(String(request.encodedExtrinsic)).toMatch(/^0x[0-9a-f]+3c04/);
    expect(String(request.payloadToSign)).toMatch(/^0x3c04/);

    const reject = async (body: Record<string, unknown>, field: RegExp) => {
      const answer = await stack.call('POST', '/v3/delegations/revokeDelegation', body);
      expect(answer.status).toBe(400);
      expect((answer.body.message as string[]).join('\n')).toMatch(field);
    };
    const stranger = SiwfUser.create(kind);
    await reject(
      { ...request, signature: stranger.signTransactionPayload(request.payloadToSign as `0x${string}`) },
      /^signature: not a signature of payloadToSign/,
    );
    // A provider that does not exist is a field of the body at fault, not a missing resource.
    await reject({ ...request, providerId: '999999' }, /^providerId: no MSA 999999/);
    const retirement = await signed(user, `/v1/accounts/retireMsa/${user.accountId}`);
    await reject(
      { ...retirement, providerId: '1' },
      /^encodedExtrinsic: not the unsigned msa.revokeDelegationByDelegator/,
    );
    await reject({ ...request, encodedExtrinsic: retirement.encodedExtrinsic }, /encodedExtrinsic: not the unsigned/);
    await reject(
      { ...request, payloadToSign: `${request.payloadToSign as string}00` },
      /^payloadToSign: not a signing payload/,
    );

    // The chain moves on after the user signed: the transaction still goes as signed (era, nonce, block hash).
    const finalized = async () =>
      (await stack.chain.api.rpc.chain.getHeader(await stack.chain.api.rpc.chain.getFinalizedHead())).number.toNumber();
    const signedAt = await finalized();
    await waitUntil(async () => (await finalized()) >= signedAt + 3, 30_000, 'three more finalized blocks');
    const answer = await stack.call('POST', '/v3/delegations/revokeDelegation', request);
    expect(answer.status).toBe(201);
    expect(answer.body.state).toBe('queued');
    const webhook = await stack.webhookOf(answer.body.referenceId as string);
    expect(webhook).toMatchObject({ transactionType: 'REVOKE_DELEGATION', status: 'SUCCESS', msaId, providerId: '1' });

    const onChain = await stack.chain.api.query.msa.delegatorAndProviderToDelegation(msaId, 1);
    const revokedAt = onChain.unwrap().revokedAt.toNumber();
    expect(revokedAt).toBe(webhook.blockNumber);
    expect((await delegationOf(msaId)).revokedAtBlock).toBe(revokedAt);
    const again = await stack.call('GET', path);
    expect(again.status).toBe(400);
    expect(String((again.body.message as string[])[0])).toMatch(/was revoked at block/);
    await reject(request, /was revoked at block/);
  }, 120_000);

  test('retirement once nothing is delegated: RETIRE_MSA webhook, and the key has no MSA any more', async () => {
    // The transaction signed before the revocation carries a nonce the revocation used.
    const stale = await stack.call('POST', '/v1/accounts/retireMsa', refused);
    expect(stale.status).toBe(400);
    expect((stale.body.message as string[]).join('\n')).toMatch(/^payloadToSign: nonce \d+ is already used/);
    const request = await signed(user, `/v1/accounts/retireMsa/${user.address}`);
    expect(String(request.payloadToSign)).toMatch(/^0x3c0a/);
    const answer = await stack.call('POST', '/v1/accounts/retireMsa', request);
    expect(answer.status).toBe(201);
    const webhook = await stack.webhookOf(answer.body.referenceId as string);
    expect(webhook).toMatchObject({ transactionType: 'RETIRE_MSA', status: 'SUCCESS', msaId });
    expect((await stack.chain.api.query.msa.publicKeyToMsaId(user.accountId)).isNone).toBe(true);
    expect((await stack.call('GET', `/v1/accounts/account/${user.accountId}`)).status).toBe(404);
    const status = await stack.call('GET', `/v1/requests/${answer.body.referenceId as string}`);
    expect(status.body).toMatchObject({ state: 'finalized', kind: 'RETIRE_MSA', msaId });
  }, 90_000);
});
