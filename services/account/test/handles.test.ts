import { SiwfUser } from './support/siwfUser.js';
import { useAccountStack } from './support/stack.js';

const stack = useAccountStack();

/** The handle payload from the gateway, signed by the user: the body of POST /v1/handles(/change). */
async function handleRequest(user: SiwfUser, handle: string) {
  const answer = await stack.call('GET', `/v1/handles/change/${handle}`);
  expect(answer.status).toBe(200);
  const payload = answer.body.payload as { baseHandle: string; expiration: number };
  expect(payload.baseHandle).toBe(handle);
  return { accountId: user.address, payload, proof: await user.claimHandleProof(stack.chain.api, payload) };
}

describe.each(['sr25519', 'ethereum'] as const)('handles of a %s user', (kind) => {
  let user: SiwfUser;
  let msaId: string;
  const base = `${kind === 'sr25519' ? 'sr' : 'eth'}handle${Math.floor(Math.random() * 1000)}`;

  beforeAll(async () => ({ user, msaId } = await stack.register(kind)), 90_000);

  test('POST /v1/handles claims one: CREATE_HANDLE webhook, then GET /v1/handles/{msaId}', async () => {
    expect((await stack.call('GET', `/v1/handles/${msaId}`)).status).toBe(404);
    const answer = await stack.call('POST', '/v1/handles', await handleRequest(user, base));
    expect(answer.status).toBe(200);
    expect(answer.body.state).toBe('queued');
    const body = await stack.webhookOf(answer.body.referenceId as string);
    expect(body).toMatchObject({ transactionType: 'CREATE_HANDLE', status: 'SUCCESS', msaId, providerId: '1' });
    expect(body.handle).toMatch(new RegExp(`^${base}\\.\\d+$`));
    const handle = await stack.call('GET', `/v1/handles/${msaId}`);
    expect(handle.body).toMatchObject({ base_handle: base, suffix: Number((body.handle as string).split('.')[1]) });
    const onChain = await stack.chain.api.rpc.handles.getHandleForMsa(msaId);
    expect(onChain.unwrap().base_handle.toString()).toBe(base);
  }, 90_000);

  test('POST /v1/handles/change changes it: CHANGE_HANDLE webhook, the new handle on chain', async () => {
    const next = `${base}x`;
    const answer = await stack.call('POST', '/v1/handles/change', await handleRequest(user, next));
    expect(answer.status).toBe(200);
    const body = await stack.webhookOf(answer.body.referenceId as string);
    expect(body).toMatchObject({ transactionType: 'CHANGE_HANDLE', status: 'SUCCESS', msaId });
    expect(body.handle).toMatch(new RegExp(`^${next}\\.\\d+$`));
    expect((await stack.call('GET', `/v1/handles/${msaId}`)).body.base_handle).toBe(next);
  }, 90_000);
});

describe('refused handle requests: 400 naming the field, nothing queued', () => {
  let user: SiwfUser;
  beforeAll(async () => ({ user } = await stack.register('sr25519')), 90_000);

  test('an invalid handle, for the payload and for the request', async () => {
    const tooLong = 'ThisHandleIsTooLongForFrequency';
    const payload = await stack.call('GET', `/v1/handles/change/${tooLong}`);
    expect(payload.status).toBe(400);
    expect(payload.body.message).toEqual([`newHandle: "${tooLong}" is not a valid handle`]);
    const request = await handleRequest(user, 'validname');
    const answer = await stack.call('POST', '/v1/handles', {
      ...request,
      payload: { ...request.payload, baseHandle: tooLong },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([`payload.baseHandle: "${tooLong}" is not a valid handle`]);
  });

  test("a signature over another payload, and another user's key", async () => {
    const request = await handleRequest(user, 'signedname');
    const other = await stack.call('POST', '/v1/handles', {
      ...request,
      payload: { ...request.payload, baseHandle: 'othername' },
    });
    expect(other.status).toBe(400);
    expect(String((other.body.message as string[])[0])).toMatch(/^proof: not a signature of the payload/);
    const stranger = SiwfUser.create('sr25519');
    const noMsa = await stack.call('POST', '/v1/handles', { ...request, accountId: stranger.address });
    expect(noMsa.status).toBe(400);
    expect((noMsa.body.message as string[]).join('\n')).toMatch(/^accountId: 0x[0-9a-f]{64} has no MSA/);
  });

  test('a malformed body names each field', async () => {
    const answer = await stack.call('POST', '/v1/handles', {
      accountId: 'nope',
      payload: { baseHandle: 'ab' },
      proof: '0x12',
    });
    expect(answer.status).toBe(400);
    const message = (answer.body.message as string[]).join('\n');
    for (const field of ['accountId', 'payload.baseHandle', 'payload.expiration', 'proof'])
      expect(message).toContain(field);
  });
});
