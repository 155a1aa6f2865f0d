import {
  notificationsByReference,
  stallFigures,
  stallWorker,
  waitUntil,
  type Stall,
} from '@frequency-gateway/devstack';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import * as bullmq from 'bullmq';
import { ACCOUNT_QUEUES } from '../src/index.js';
import { KEYSPACE, startAccountStack, type AccountStack } from './support/stack.js';

const SIGN_UPS = 200;
/** The shortest lock the timing contract allows (twice the 10 s record deadline), looked for stalls every 5 s. */
const LOCK = { SIGNING_JOB_LOCK_MS: '20000', SIGNING_JOB_STALLED_CHECK_MS: '5000' };
const logs: string[] = [];
let stack: AccountStack;

beforeAll(async () => {
  await cryptoWaitReady();
  stack = await startAccountStack({ workerEnv: { ...LOCK, LOG_LEVEL: 'info' }, workerLogs: logs });
  await stack.startWorker();
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

test(`two workers, one frozen past its job lock while ${SIGN_UPS} sign-ups arrive: each signed up once, one webhook each`, async () => {
  const started = Date.now();
  const msaCount = async () => Number((await stack.chain.api.query.msa.currentMsaIdentifierMaximum()).toString());
  const msasBefore = await msaCount();
  // The first worker is frozen while it holds sign-ups; the sign-ups go on arriving meanwhile.
  let stall: Stall | undefined;
  const stalling = stallWorker(
    stack.workers[0]!,
    { bullmq, name: ACCOUNT_QUEUES.transactionPublish, redisUrl: stack.redis.url, prefix: `${KEYSPACE}:bull` },
    150_000,
  ).then((done) => (stall = done));
  // Awaited once the sign-ups are in; a failure meanwhile is not left unhandled.
  stalling.catch(() => undefined);
  const users: { user: SiwfUser; referenceId: string }[] = [];
  const signUpOne = async () => {
    const user = SiwfUser.create('sr25519');
    // A proof window of 90 blocks (1 s each), within the chain's 100: it outlasts the freeze.
    const finalized = (
      await stack.chain.api.rpc.chain.getHeader(await stack.chain.api.rpc.chain.getFinalizedHead())
    ).number.toNumber();
    const response = await stack.signUpOf(user, { expiration: finalized + 90 });
    // A 503 accepts nothing (on a loaded machine the api may lose its chain for a moment): sent again, as a client
    // does.
    const answer = await waitUntil(
      async () => {
        const reply = await stack.call('POST', '/v2/accounts/siwf', {
          authorizationPayload: encodeAuthorizationPayload(response),
        });
        return reply.status !== 503 && reply;
      },
      30_000,
      'an answer other than 503',
      500,
    );
    expect(answer.status).toBe(200);
    users.push({ user, referenceId: answer.body.signUpReferenceId as string });
  };
  await Promise.all(
    Array.from({ length: 8 }, async (_, lane) => {
      for (let index = lane; index < SIGN_UPS; index += 8) await signUpOne();
    }),
  );
  await stalling;

  // Every request ends, and nothing is left that could notify again.
  const ended = async () => {
    for (const { referenceId } of users) {
      const state = (await stack.call('GET', `/v1/requests/${referenceId}`)).body.state as string;
      if (state !== 'finalized' && state !== 'failed') return false;
    }
    return true;
  };
  await waitUntil(ended, 120_000, 'every sign-up ended');
  await waitUntil(stack.settled, 60_000, 'the queues and the transaction tracker settled');

  const byReference = notificationsByReference(stack.receiver.received);
  const twice = [...byReference].filter(([, bodies]) => bodies.length > 1);
  expect(twice).toEqual([]);
  const notSuccess = users.filter(({ referenceId }) => byReference.get(referenceId)?.[0]?.status !== 'SUCCESS');
  expect(notSuccess.map(({ referenceId }) => [referenceId, byReference.get(referenceId)])).toEqual([]);
  const states = await Promise.all(
    users.map(async ({ referenceId }) => (await stack.call('GET', `/v1/requests/${referenceId}`)).body),
  );
  expect(states.filter((record) => record.state !== 'finalized')).toEqual([]);

  // One MSA per sign-up, each the one its user's key points to, named in its webhook.
  expect((await msaCount()) - msasBefore).toBe(SIGN_UPS);
  for (const { user, referenceId } of users) {
    const msaId = (await stack.chain.api.query.msa.publicKeyToMsaId(user.accountId)).unwrap().toString();
    expect(byReference.get(referenceId)![0]!.msaId).toBe(msaId);
  }
  process.stdout.write(
    `stalled worker figures (sign-ups): ${JSON.stringify({
      seconds: (Date.now() - started) / 1000,
      signUps: users.length,
      finalized: states.filter((record) => record.state === 'finalized').length,
      webhooks: stack.receiver.received.length,
      webhooksSentAgain: byReference.repeated,
      msas: (await msaCount()) - msasBefore,
      ...stallFigures(stall, logs),
    })}\n`,
  );
}, 300_000);
