import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadFacts } from '@frequency-gateway/devchain';
import { SiwfUser } from '@frequency-gateway/devstack/siwf';
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

/**
 * The numbers a module error must carry, from sources other than the chain under test: the pallet's index from
 * the runtime facts of Frequency v2.0.1, the error's position from the pallet's Error enum in api-augment.
 */
async function referenceNumbers(pallet: string, error: string): Promise<{ index: number; code: number }> {
  const index = loadFacts().pallets.find((entry) => entry.name === pallet)?.index;
  const augment = dirname(dirname(createRequire(import.meta.url).resolve('@frequency-chain/api-augment')));
  const lookup = (await import(join(augment, 'esm', 'interfaces', 'lookup.js'))) as {
    default: Record<string, { _enum?: string[] }>;
  };
  const code = lookup.default[`Pallet${pallet}Error`]?._enum?.indexOf(error);
  if (index === undefined || code === undefined || code < 0) throw new Error(`no reference for ${pallet}.${error}`);
  return { index, code };
}

describe('a claim the chain refuses', () => {
  test('a second handle for an MSA: the FAILED webhook, the request record and the worker log name the pallet and error, with their numbers', async () => {
    const { user, msaId } = await stack.register('sr25519');
    const first = await stack.call('POST', '/v1/handles', await handleRequest(user, `first${msaId}`));
    expect((await stack.webhookOf(first.body.referenceId as string)).status).toBe('SUCCESS');

    // The api lets it through (a valid handle, signed by the MSA's key); the chain refuses: the MSA has one.
    const second = await stack.call('POST', '/v1/handles', await handleRequest(user, `second${msaId}`));
    expect(second.status).toBe(200);
    const referenceId = second.body.referenceId as string;
    const numbers = await referenceNumbers('Handles', 'MSAHandleAlreadyExists');
    expect(numbers).toEqual({ index: 66, code: 9 });
    const error = {
      module: 'Handles',
      name: 'MSAHandleAlreadyExists',
      ...numbers,
      message: 'the chain refused the transaction: handles.MSAHandleAlreadyExists (pallet index 66, error code 9)',
    };

    const webhook = await stack.webhookOf(referenceId);
    expect(webhook).toMatchObject({ transactionType: 'CREATE_HANDLE', status: 'FAILED' });
    expect(webhook.error).toEqual(error);
    const record = await stack.call('GET', `/v1/requests/${referenceId}`);
    expect(record.body).toMatchObject({ state: 'failed', error });
    const logged = stack.workers
      .flatMap((worker) => worker.output())
      .flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : []))
      .find((line) => line.referenceId === referenceId && line.msg === 'failed');
    expect(logged?.error).toEqual(error);
  }, 120_000);
});
