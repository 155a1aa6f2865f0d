import { waitUntil } from '@frequency-gateway/devstack';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { useAccountStack } from './support/stack.js';

// Finality four blocks behind the best block, a block a second: a sign-up is in a best block for about four
// seconds before it is final.
const stack = useAccountStack({ finalityLag: 4, blockTimeMs: 1_000 });

/** The look-ups of a user, and a login of theirs, as a front end makes them. */
async function lookUps(user: SiwfUser, msaId: string) {
  const login = await stack.call('POST', '/v2/accounts/siwf', {
    authorizationPayload: encodeAuthorizationPayload(await user.login({ uri: 'https://localhost/login' })),
  });
  expect(login.status).toBe(200);
  return {
    account: (await stack.call('GET', `/v1/accounts/account/${user.address}`)).status,
    byMsa: (await stack.call('GET', `/v1/accounts/${msaId}`)).status,
    handle: (await stack.call('GET', `/v1/handles/${msaId}`)).status,
    delegations: (await stack.call('GET', `/v3/delegations/${msaId}`)).status,
    delegation: (await stack.call('GET', `/v3/delegations/${msaId}/1`)).status,
    loginMsaId: login.body.msaId,
  };
}

test('a sign-up in a best block that is not final yet: every look-up answers 404 (no msaId at login); once final, 200', async () => {
  const { api } = stack.chain;
  const user = SiwfUser.create('sr25519');
  const handle = `lagging${Math.floor(Math.random() * 1000)}`;
  const answer = await stack.call('POST', '/v2/accounts/siwf', {
    authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(user, { handle })),
  });
  expect(answer.status).toBe(200);

  // The account in the best block...
  let msaId = '';
  await waitUntil(
    async () => {
      const id = await api.query.msa.publicKeyToMsaId(user.accountId);
      msaId = id.isSome ? id.unwrap().toString() : '';
      return id.isSome;
    },
    60_000,
    'the account in the best block',
  );
  // ...and, while the finalized block still has none of it, the look-ups made in between.
  const finalizedHasIt = async () =>
    (await api.query.msa.publicKeyToMsaId.at(await api.rpc.chain.getFinalizedHead(), user.accountId)).isSome;
  expect(await finalizedHasIt()).toBe(false);
  const before = await lookUps(user, msaId);
  // Finality only moves forward: not final now means not final during any of those look-ups.
  if (await finalizedHasIt()) throw new Error('the sign-up was finalized during the look-ups: too slow a machine?');
  expect(before).toEqual({
    account: 404,
    byMsa: 404,
    handle: 404,
    delegations: 404,
    delegation: 404,
    loginMsaId: undefined,
  });

  // Final: the webhook says so, and every look-up finds it.
  const webhook = await stack.webhookOf(answer.body.signUpReferenceId as string);
  expect(webhook).toMatchObject({ status: 'SUCCESS', msaId });
  expect(await finalizedHasIt()).toBe(true);
  expect(await lookUps(user, msaId)).toEqual({
    account: 200,
    byMsa: 200,
    handle: 200,
    delegations: 200,
    delegation: 200,
    loginMsaId: msaId,
  });
  expect((await stack.call('GET', `/v1/accounts/account/${user.address}`)).body).toMatchObject({
    msaId,
    handle: { base_handle: handle },
  });
}, 120_000);
