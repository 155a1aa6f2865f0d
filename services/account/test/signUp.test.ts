import { verifyWebhook } from '@frequency-gateway/webhooks';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { Redis } from 'ioredis';
import { startSiwfServer, type SiwfServer } from './support/siwfServer.js';
import { encodeAuthorizationPayload, SiwfUser, tamper } from '@frequency-gateway/devstack/siwf';
import { KEYSPACE, startAccountStack, WEBHOOK_SECRET, type AccountStack } from './support/stack.js';
import { waitUntil } from '@frequency-gateway/devstack';

let stack: AccountStack;
let siwfServer: SiwfServer;
let redis: Redis;

beforeAll(async () => {
  await cryptoWaitReady();
  siwfServer = await startSiwfServer();
  stack = await startAccountStack({ apiEnv: { SIWF_V2_URL: siwfServer.url } });
  redis = new Redis(stack.redis.url);
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
  await siwfServer?.stop();
});

const post = (body: unknown) => stack.call('POST', '/v2/accounts/siwf', body);
const requestKeys = async () => (await redis.keys(`${KEYSPACE}:request:*`)).length;
const aliceNonce = async () =>
  (await stack.chain.api.rpc.system.accountNextIndex('5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY')).toNumber();

/** The events of a block by section.method. */
async function eventNames(blockHash: string): Promise<string[]> {
  const events = await stack.chain.api.query.system.events.at(blockHash);
  return events.map(({ event }) => `${event.section}.${event.method}`);
}

describe('a new user signs up (sr25519)', () => {
  const user = () => SiwfUser.create('sr25519');
  let signUp: SiwfUser;
  let referenceId: string;
  const handle = `newcomer${Math.floor(Math.random() * 1000)}`;

  test('the sign-in answers 200 with a queued sign-up and no msaId; the account is 404 until finalization', async () => {
    signUp = user();
    const response = await stack.signUpOf(signUp, { handle });
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(answer.status).toBe(200);
    expect(answer.body.controlKey).toBe(signUp.address);
    expect(answer.body.msaId).toBeUndefined();
    expect(answer.body.signUpStatus).toBe('queued');
    referenceId = answer.body.signUpReferenceId as string;
    expect(referenceId).toMatch(/^[A-Za-z0-9_-]+$/);
    const lookup = await stack.call('GET', `/v1/accounts/account/${answer.body.controlKey as string}`);
    expect(lookup.status).toBe(404);
  });

  test('the webhook arrives once, signed, with the new account; then the look-up finds it', async () => {
    const [delivery] = await stack.receiver.waitFor(1, 60_000);
    const body = delivery!.body as Record<string, unknown>;
    expect(delivery!.path).toBe('/webhooks/transaction-notify');
    expect(verifyWebhook(WEBHOOK_SECRET, delivery!.headers, delivery!.raw)).toBe(true);
    expect(body).toMatchObject({
      transactionType: 'SIWF_SIGNUP',
      providerId: '1',
      referenceId,
      status: 'SUCCESS',
      accountId: signUp.address,
    });
    expect(body.msaId).toMatch(/^\d+$/);
    expect(body.handle).toMatch(new RegExp(`^${handle}\\.\\d+$`));

    const names = await eventNames(body.blockHash as string);
    for (const name of [
      'msa.MsaCreated',
      'msa.DelegationGranted',
      'handles.HandleClaimed',
      'statefulStorage.ItemizedPageUpdated',
    ])
      expect(names).toContain(name);
    expect(names).not.toContain('system.ExtrinsicFailed');

    const lookup = await stack.call('GET', `/v1/accounts/account/${signUp.address}`);
    expect(lookup.status).toBe(200);
    expect(lookup.body.msaId).toBe(body.msaId);
    const [base, suffix] = (body.handle as string).split('.');
    expect(lookup.body.handle).toMatchObject({ base_handle: base, suffix: Number(suffix) });
    const byMsa = await stack.call('GET', `/v1/accounts/${body.msaId as string}`);
    expect(byMsa.body).toEqual(lookup.body);

    const record = await stack.call('GET', `/v1/requests/${referenceId}`);
    expect(record.body).toMatchObject({ state: 'finalized', msaId: body.msaId, handle: body.handle });
    expect((record.body.history as { state: string }[]).map((step) => step.state)).toEqual([
      'queued',
      'submitted',
      'finalized',
    ]);
    // Exactly once: nothing more arrives once nothing is left that could send it.
    await waitUntil(stack.settled, 30_000, 'the queues and the transaction tracker settled');
    expect(stack.receiver.received).toHaveLength(1);
  });

  test('the same user signs in again: 200 with their details, and no transaction', async () => {
    const nonce = await aliceNonce();
    const requests = await requestKeys();
    const answer = await post({
      authorizationPayload: encodeAuthorizationPayload(await signUp.login({ uri: 'https://localhost/login' })),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.controlKey).toBe(signUp.address);
    expect(answer.body.msaId).toEqual(expect.stringMatching(/^\d+$/));
    expect(answer.body.signUpReferenceId).toBeUndefined();
    expect(await requestKeys()).toBe(requests);
    expect(await aliceNonce()).toBe(nonce);
  });
});

describe('a new user with an Ethereum key signs up through an authorizationCode', () => {
  test('200, then the SUCCESS webhook with the unified account and a handle', async () => {
    const user = SiwfUser.create('ethereum');
    const before = stack.receiver.received.length;
    const code = siwfServer.issue(await stack.signUpOf(user));
    const answer = await post({ authorizationCode: code });
    expect(answer.status).toBe(200);
    expect(answer.body.controlKey).toBe(user.address);
    const referenceId = answer.body.signUpReferenceId as string;
    const deliveries = await stack.receiver.waitFor(before + 1, 60_000);
    const body = deliveries.at(-1)!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      referenceId,
      status: 'SUCCESS',
      accountId: user.address,
      transactionType: 'SIWF_SIGNUP',
    });
    expect(body.handle).toMatch(/^user\d+\.\d+$/);
    const lookup = await stack.call('GET', `/v1/accounts/account/${user.accountId}`);
    expect(lookup.body.msaId).toBe(body.msaId);
  });

  test('an unknown code is 400 naming authorizationCode', async () => {
    const answer = await post({ authorizationCode: 'no-such-code' });
    expect(answer.status).toBe(400);
    expect(String(answer.body.message)).toMatch(/^authorizationCode: /);
  });
});

describe('refused sign-ins: 400 with the reason, and no job', () => {
  let requests: number;
  let nonce: number;
  beforeEach(async () => {
    requests = await requestKeys();
    nonce = await aliceNonce();
  });
  afterEach(async () => {
    expect(await requestKeys()).toBe(requests);
    expect(await aliceNonce()).toBe(nonce);
  });

  test.each(['sr25519', 'ethereum'] as const)('a tampered claimHandle signature (%s)', async (kind) => {
    const response = await stack.signUpOf(SiwfUser.create(kind));
    const index = response.payloads.findIndex((payload) => payload.type === 'claimHandle');
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(tamper(response, index)) });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([
      `authorizationPayload.payloads[${index}].signature: not a signature of this claimHandle payload by the user's key`,
    ]);
  });

  test('a tampered login signature', async () => {
    const response = await stack.signUpOf(SiwfUser.create('sr25519'));
    const index = response.payloads.findIndex((payload) => payload.type === 'login');
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(tamper(response, index)) });
    expect(answer.status).toBe(400);
    expect(String(answer.body.message)).toMatch(/^authorizationPayload: .*signature/i);
  });

  test('expired payloads', async () => {
    const finalized = (
      await stack.chain.api.rpc.chain.getHeader(await stack.chain.api.rpc.chain.getFinalizedHead())
    ).number.toNumber();
    const response = await stack.signUpOf(SiwfUser.create('sr25519'), { expiration: finalized });
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(answer.status).toBe(400);
    expect((answer.body.message as string[]).join('\n')).toMatch(
      /payloads\[0\]\.payload\.expiration: expired at block \d+/,
    );
  });

  test('an expired login message', async () => {
    const user = SiwfUser.create('sr25519');
    const response = await user.login({
      uri: 'https://localhost/login',
      expirationTime: new Date(Date.now() - 60_000),
    });
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(answer.status).toBe(400);
    expect(String(answer.body.message)).toMatch(/expired/i);
  });

  test('a sign-up for another provider', async () => {
    const response = await stack.signUpOf(SiwfUser.create('sr25519'), { providerId: 2 });
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(answer.status).toBe(400);
    expect((answer.body.message as string[]).join('\n')).toMatch(
      /payloads\[0\]\.payload\.authorizedMsaId: addressed to provider 2, this gateway is provider 1/,
    );
  });

  test('a login from another domain', async () => {
    const response = await stack.signUpOf(SiwfUser.create('sr25519'), { login: { uri: 'https://evil.example/login' } });
    const answer = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(answer.status).toBe(400);
    expect(String(answer.body.message)).toMatch(/^authorizationPayload: .*domain/i);
  });

  test('neither a code nor a payload, and a payload that is not a SIWF response', async () => {
    expect((await post({})).status).toBe(400);
    const garbage = await post({ authorizationPayload: Buffer.from('{"hello":1}').toString('base64url') });
    expect(garbage.status).toBe(400);
    expect((garbage.body.message as string[]).join('\n')).toMatch(/authorizationPayload\.userPublicKey/);
  });
});

describe('read-only (no provider key)', () => {
  test('sign-in requests and sign-ups are refused with 403; a registered user still signs in', async () => {
    const readOnly = await stack.startApi({ PROVIDER_ACCOUNT_SEED_PHRASE: '' });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${readOnly.url}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const redirect = await call('GET', '/v2/accounts/siwf?callbackUrl=https%3A%2F%2Fapp.example%2Fcb');
    expect(redirect.status).toBe(403);
    expect(String(redirect.body.message)).toMatch(/provider key/);

    const requests = await requestKeys();
    const newcomer = await stack.signUpOf(SiwfUser.create('sr25519'));
    const signUp = await call('POST', '/v2/accounts/siwf', {
      authorizationPayload: encodeAuthorizationPayload(newcomer),
    });
    expect(signUp.status).toBe(403);
    expect(String(signUp.body.message)).toMatch(/read-only/);
    expect(await requestKeys()).toBe(requests);

    // A user registered by the signing api (the first sign-up of this suite, or a fresh one) signs in.
    const user = SiwfUser.create('sr25519');
    const accepted = await post({ authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(user)) });
    await waitUntil(
      async () =>
        (await stack.call('GET', `/v1/requests/${accepted.body.signUpReferenceId as string}`)).body.state ===
        'finalized',
      60_000,
      'the sign-up finalized',
    );
    const login = await call('POST', '/v2/accounts/siwf', {
      authorizationPayload: encodeAuthorizationPayload(await user.login({ uri: 'https://localhost/login' })),
    });
    expect(login.status).toBe(200);
    expect(login.body.msaId).toEqual(expect.stringMatching(/^\d+$/));
  }, 120_000);
});

describe('the sign-in request', () => {
  test('GET /v2/accounts/siwf signs a request for the named intents and credentials', async () => {
    const answer = await stack.call(
      'GET',
      '/v2/accounts/siwf?callbackUrl=https%3A%2F%2Fapp.example%2Fcallback&permissions=dsnp.broadcast&permissions=dsnp.reply@v2&credentials=VerifiedGraphKeyCredential&credentials=VerifiedEmailAddressCredential',
    );
    expect(answer.status).toBe(200);
    const redirect = new URL(answer.body.redirectUrl as string);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`${siwfServer.url}/start`);
    expect(redirect.searchParams.get('signedRequest')).toBe(answer.body.signedRequest);
    expect(redirect.searchParams.get('frequencyRpcUrl')).toBe(stack.devchain.url);
    const request = JSON.parse(Buffer.from(answer.body.signedRequest as string, 'base64url').toString()) as {
      requestedSignatures: { payload: { callback: string; permissions: number[] } };
      requestedCredentials: unknown[];
    };
    expect(request.requestedSignatures.payload.callback).toBe('https://app.example/callback');
    expect(request.requestedSignatures.payload.permissions).toHaveLength(2);
    expect(request.requestedCredentials).toHaveLength(2);
  });

  test('an unknown intent, a callback with a query string, an unknown credential: 400 naming each', async () => {
    const answer = await stack.call(
      'GET',
      '/v2/accounts/siwf?callbackUrl=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1&credentials=Nope',
    );
    expect(answer.status).toBe(400);
    const message = (answer.body.message as string[]).join('\n');
    expect(message).toMatch(/callbackUrl/);
    expect(message).toMatch(/credentials/);
    const intent = await stack.call(
      'GET',
      '/v2/accounts/siwf?callbackUrl=https%3A%2F%2Fapp.example%2Fcb&permissions=dsnp.nothing',
    );
    expect(intent.status).toBe(400);
    expect(intent.body.message).toEqual(['permissions[0]: no intent named dsnp.nothing on chain']);
  });

  test('GET /v1/frequency/blockinfo reports the best and finalized blocks', async () => {
    await waitUntil(
      async () => {
        const info = (await stack.call('GET', '/v1/frequency/blockinfo')).body;
        return (info.blocknumber as number) > (info.finalized_blocknumber as number);
      },
      10_000,
      'a best block ahead of the finalized one',
    );
    const info = (await stack.call('GET', '/v1/frequency/blockinfo')).body;
    expect(info.genesis).toBe(stack.chain.api.genesisHash.toHex());
    expect(info.runtime_version).toEqual(expect.any(Number));
  });

  test('the OpenAPI document publishes the routes and the transaction-notify webhook', async () => {
    const document = (await stack.call('GET', '/docs/swagger.json')).body as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string }>>;
      webhooks: Record<string, { post: { operationId: string } }>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/v2/accounts/siwf']?.post?.operationId).toBe(
      'AccountsControllerV2_postSignInWithFrequency_v2',
    );
    expect(document.paths['/v2/accounts/swif']).toBeUndefined();
    expect(document.webhooks['transaction-notify']?.post.operationId).toBe('transactionNotify');
  });
});
