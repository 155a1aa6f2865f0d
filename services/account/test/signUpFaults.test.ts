import {
  accountCalls,
  CapacitySubmitter,
  loadProviderKey,
  NonceManager,
  SIGNING_KEYSPACE,
  TransactionTracker,
} from '@frequency-gateway/chain';
import { waitUntil } from '@frequency-gateway/devstack';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { intakeStream, waitingIntakeJob } from '@frequency-gateway/platform';
import type { TransactionJob } from '../src/jobs.js';
import { KEYSPACE, startAccountStack, WEBHOOK_SECRET, type AccountStack } from './support/stack.js';

let stack: AccountStack;

beforeAll(async () => {
  await cryptoWaitReady();
  // Finality three blocks behind: a transaction stays submitted-but-unfinalized for a few seconds.
  stack = await startAccountStack({ blockTimeMs: 1_000, finalityLag: 3 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** A counter of the newest worker, by one of its labels (0 before the first count). */
async function workerCount(name: string, label: string): Promise<number> {
  const text = await (await fetch(`${stack.workers.at(-1)!.url}/metrics`)).text();
  return Number(new RegExp(`^${name}\\{[^}]*${label}[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** The worker's count of delivery attempts that failed and were scheduled again (webhook_deliveries_total). */
const retriedDeliveries = () => workerCount('webhook_deliveries_total', 'outcome="retry"');

async function signUp(): Promise<string> {
  const answer = await stack.call('POST', '/v2/accounts/siwf', {
    authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(SiwfUser.create('sr25519'))),
  });
  expect(answer.status).toBe(200);
  return answer.body.signUpReferenceId as string;
}

const deliveriesOf = (referenceId: string) =>
  stack.receiver.received.filter((delivery) => (delivery.body as { referenceId?: string }).referenceId === referenceId);

const stateOf = async (referenceId: string) =>
  (await stack.call('GET', `/v1/requests/${referenceId}`)).body.state as string | undefined;

test('a worker killed after submission, before finalization: the webhook still arrives exactly once', async () => {
  const referenceId = await signUp();
  await waitUntil(async () => (await stateOf(referenceId)) === 'submitted', 30_000, 'the sign-up submitted');
  expect(await stateOf(referenceId)).toBe('submitted');
  await stack.workers[0]!.stop('SIGKILL');
  await stack.startWorker();

  await waitUntil(async () => deliveriesOf(referenceId).length > 0, 60_000, 'the notification');
  // A duplicate would come from a second submission or a second settlement: wait until neither can happen.
  await waitUntil(stack.settled, 60_000, 'the queues and the transaction tracker settled');
  const deliveries = deliveriesOf(referenceId);
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]!.body).toMatchObject({ status: 'SUCCESS', referenceId });
  expect(await stateOf(referenceId)).toBe('finalized');
}, 120_000);

test('a webhook receiver down through several attempts gets the notification late, once', async () => {
  await stack.receiver.stop();
  const retriedBefore = await retriedDeliveries();
  const referenceId = await signUp();
  await waitUntil(async () => (await stateOf(referenceId)) === 'finalized', 60_000, 'the sign-up finalized');
  // Refused three times, each retry later than the one before (500 ms base, doubling): what a receiver down
  // for a while sees, counted rather than slept through.
  await waitUntil(async () => (await retriedDeliveries()) - retriedBefore >= 3, 30_000, 'three refused deliveries');
  expect(deliveriesOf(referenceId)).toHaveLength(0);
  await stack.receiver.start();

  await waitUntil(async () => deliveriesOf(referenceId).length > 0, 30_000, 'the late notification');
  await waitUntil(stack.settled, 30_000, 'the queues and the transaction tracker settled');
  const deliveries = deliveriesOf(referenceId);
  expect(deliveries).toHaveLength(1);
  expect(verifyWebhook(WEBHOOK_SECRET, deliveries[0]!.headers, deliveries[0]!.raw)).toBe(true);
  expect(deliveries[0]!.body).toMatchObject({ status: 'SUCCESS', referenceId, transactionType: 'SIWF_SIGNUP' });
}, 150_000);

test('a worker killed between recording its transaction and submitting it: the scan submits it, once', async () => {
  // No worker runs while the sign-up is taken, so its job waits in the intake stream.
  await stack.workers.at(-1)!.stop('SIGKILL');
  const referenceId = await signUp();

  // What a worker that died right after recording leaves behind, written as the worker writes it: the signed
  // transaction recorded with the tracker and linked to its request, with the provider's next nonce, and
  // never submitted.
  const waiting = await waitingIntakeJob(stack.admin, intakeStream(KEYSPACE, 'account'), referenceId);
  const job = waiting?.data as TransactionJob | undefined;
  expect(job?.type).toBe('SIWF_SIGNUP');
  const { api } = stack.chain;
  const provider = await loadProviderKey('//Alice');
  const nonces = new NonceManager(stack.admin, api, provider.address, { prefix: SIGNING_KEYSPACE });
  const submitter = new CapacitySubmitter(api, provider, nonces);
  const builder = accountCalls(api);
  const signed = await submitter.sign(job!.calls!.map((call) => builder.decode(call.encodedExtrinsic)));
  const tracker = new TransactionTracker(api, stack.admin, { prefix: KEYSPACE, onOutcome: async () => undefined });
  const link = { key: `${KEYSPACE}:request:tx:${referenceId}`, value: signed.hash, ttlSeconds: 3_600 };
  await tracker.record(signed, [referenceId], [link]);

  // A worker takes the job: it finds the link and never signs a second transaction. Its scan submits the
  // recorded one once it is 20 s old, well within its era (64 blocks of 1 s). Left alone, it would expire with
  // its era and the sign-up would fail.
  await stack.startWorker();
  await waitUntil(async () => deliveriesOf(referenceId).length > 0, 90_000, 'the notification');
  await waitUntil(stack.settled, 60_000, 'the queues and the transaction tracker settled');
  const deliveries = deliveriesOf(referenceId);
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]!.body).toMatchObject({ status: 'SUCCESS', referenceId, txHash: signed.hash });
  expect(await stateOf(referenceId)).toBe('finalized');
  expect(await workerCount('chain_transactions_resubmitted_total', 'result="submitted"')).toBe(1);
}, 180_000);
