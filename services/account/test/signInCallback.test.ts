import { cryptoWaitReady } from '@polkadot/util-crypto';
import { waitUntil } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { startSiwfServer, type SiwfServer } from './support/siwfServer.js';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { KEYSPACE, startAccountStack, type AccountStack } from './support/stack.js';

let stack: AccountStack;
let siwfServer: SiwfServer;
let redis: Redis;
/** A user whose account is on chain and final. */
let user: SiwfUser;
let msaId: string;

beforeAll(async () => {
  await cryptoWaitReady();
  siwfServer = await startSiwfServer();
  stack = await startAccountStack({ apiEnv: { SIWF_V2_URL: siwfServer.url } });
  redis = new Redis(stack.redis.url);
  ({ user, msaId } = await stack.register('sr25519'));
}, 180_000);

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
  await siwfServer?.stop();
});

const post = (body: unknown) => stack.call('POST', '/v2/accounts/siwf', body);
const login = (options: Parameters<SiwfUser['login']>[0] = {}) =>
  user.login({ uri: 'https://localhost/login', ...options });
const requestKeys = async () => (await redis.keys(`${KEYSPACE}:request:*`)).length;

describe('the callback takes the SIWF response in every shape the specification shows', () => {
  test.each([
    ['a base64url string', async () => ({ authorizationPayload: encodeAuthorizationPayload(await login()) })],
    ['the JSON object', async () => ({ authorizationPayload: await login() })],
    [
      'null beside an authorizationCode',
      async () => ({ authorizationCode: siwfServer.issue(await login()), authorizationPayload: null }),
    ],
    ['an authorizationCode alone', async () => ({ authorizationCode: siwfServer.issue(await login()) })],
  ])('%s: the user signs in (200, their MSA)', async (_shape, body) => {
    const answer = await post(await body());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ controlKey: user.address, msaId });
  });

  test.each([
    [{ authorizationPayload: 42 }, /^body\.authorizationPayload: must be the SIWF response/],
    [{ authorizationPayload: ['a'] }, /^body\.authorizationPayload: must be the SIWF response/],
    [{ authorizationPayload: 'not base64url!' }, /^body\.authorizationPayload: a string must be base64url/],
    [
      { authorizationPayload: true, authorizationCode: 'abc' },
      /^body\.authorizationPayload: must be the SIWF response/,
    ],
    [{ authorizationPayload: null }, /^body\.authorizationCode: give an authorizationCode/],
    [{}, /^body\.authorizationCode: give an authorizationCode/],
    [{ authorizationPayload: null, authorizationCode: 7 }, /^body\.authorizationCode: /],
  ])('%j: 400 naming the field', async (body, message) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([expect.stringMatching(message)]);
  });

  test('an object that is no SIWF response: 400 naming the field inside it', async () => {
    const answer = await post({ authorizationPayload: { userPublicKey: 'me', payloads: [] } });
    expect(answer.status).toBe(400);
    expect((answer.body.message as string[]).join('\n')).toMatch(/^authorizationPayload\.userPublicKey: /m);
  });

  test('the OpenAPI document shows the three shapes as oneOf', async () => {
    const document = (await stack.call('GET', '/docs/swagger.json')).body as {
      components: { schemas: Record<string, { properties: Record<string, { oneOf?: { type: string }[] }> }> };
    };
    const property = document.components.schemas.WalletV2LoginRequestDto?.properties.authorizationPayload;
    expect(property?.oneOf?.map((shape) => shape.type)).toEqual(['string', 'object', 'null']);
  });
});

describe('a login message is accepted once', () => {
  test('the same payload again: 401, whatever its shape; a fresh login still works', async () => {
    const response = await login();
    const first = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(first.status).toBe(200);
    for (const again of [
      { authorizationPayload: encodeAuthorizationPayload(response) },
      { authorizationPayload: response },
      { authorizationCode: siwfServer.issue(response) },
    ]) {
      const replay = await post(again);
      expect(replay.status).toBe(401);
      expect(String(replay.body.message)).toMatch(/used before/);
    }
    expect((await post({ authorizationPayload: await login() })).status).toBe(200);
  });

  test('the same authorizationCode twice: 200, then 401', async () => {
    const code = siwfServer.issue(await login());
    expect((await post({ authorizationCode: code })).status).toBe(200);
    const replay = await post({ authorizationCode: code });
    expect(replay.status).toBe(401);
    expect(String(replay.body.message)).toMatch(/^authorizationCode: this login message was used before/);
  });

  test('the nonce is remembered under the service prefix until the message expires', async () => {
    const expires = new Date(Date.now() + 120_000);
    expect((await post({ authorizationPayload: await login({ expirationTime: expires }) })).status).toBe(200);
    const keys = await redis.keys(`${KEYSPACE}:siwf:login-nonce:*`);
    const ttls = await Promise.all(keys.map((key) => redis.pttl(key)));
    // The newest message expires in two minutes; the others (five minutes) later.
    expect(Math.min(...ttls)).toBeGreaterThan(100_000);
    expect(Math.min(...ttls)).toBeLessThanOrEqual(120_000);
  });

  test('a login message without an Expiration Time: 400 (it could not be remembered until it ends)', async () => {
    const answer = await post({ authorizationPayload: await login({ expirationTime: null }) });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([
      expect.stringMatching(
        /^authorizationPayload\.payloads\[0\]\.payload\.message: the login message has no Expiration Time/,
      ),
    ]);
  });

  test('a sign-up posted again answers as the first time (same referenceId, nothing queued); its login alone is refused', async () => {
    const newcomer = SiwfUser.create('sr25519');
    const response = await stack.signUpOf(newcomer);
    const first = await post({ authorizationPayload: encodeAuthorizationPayload(response) });
    expect(first.status).toBe(200);
    const referenceId = first.body.signUpReferenceId as string;
    await stack.webhookOf(referenceId);
    const requests = await requestKeys();
    const again = await post({ authorizationPayload: response });
    expect(again.status).toBe(200);
    expect(again.body.signUpReferenceId).toBe(referenceId);
    expect(await requestKeys()).toBe(requests);
    // The login message of that sign-up, taken out and posted as a plain login.
    const loginOnly = { ...response, payloads: response.payloads.filter((payload) => payload.type === 'login') };
    const replay = await post({ authorizationPayload: loginOnly });
    expect(replay.status).toBe(401);
    // Still one webhook: nothing was submitted twice.
    await stack.webhookOf(referenceId);
  }, 90_000);

  test('with Redis away a login is refused with 503 and stays unused: the same message signs in once Redis is back', async () => {
    const response = await login();
    await stack.redis.kill('SIGTERM');
    try {
      const refused = await post({ authorizationPayload: response });
      expect(refused.status).toBe(503);
      expect(String(refused.body.message)).toMatch(/could not be checked for reuse/);
    } finally {
      await stack.redis.restart();
    }
    await waitUntil(async () => (await post({ authorizationPayload: response })).status === 200, 30_000, 'a login');
    expect((await post({ authorizationPayload: response })).status).toBe(401);
  }, 60_000);
});
