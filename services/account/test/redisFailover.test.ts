import { ChainQueries } from '@frequency-gateway/chain';
import { callJson, killPrimaryUnderLoad, waitUntil, type ServerProcess } from '@frequency-gateway/devstack';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { useAccountStack, WEBHOOK_SECRET } from './support/stack.js';

// The sign-up half of the whole-gateway Redis failover test (the broadcast half is content-publishing's
// redisFailover.test.ts): the Redis primary dies (kill -9) in the middle of SIWF sign-ups of new users posted at
// a steady rate, on a primary with four replicas and three Sentinels (REDIS_SENTINELS); in the second test the
// replica the Sentinels promote dies too, as soon as they name it. Two apis take the posts in turn: one answers only
// once a replica has the sign-up request (REDIS_DURABILITY=replicated), the other once the primary has it. The
// worker confirms what each job wrote, and each transaction's record, on a replica before it goes on. Every
// component follows the failovers without a restart. The plain api's losses are figures, not checked.
const SIGN_UPS = 200;
const RATE_PER_SECOND = 10;
/** The kill comes after this many posts: a third of the way. */
const KILL_AFTER = 67;

/** The worker's log lines: what it said of a sign-up that did not end as it should is in the figures. */
const workerLogs: string[] = [];
const stack = useAccountStack({
  redis: 'sentinel',
  workerEnv: { REDIS_DURABILITY: 'replicated' },
  workerLogs,
});
let durable: ServerProcess;
beforeAll(async () => {
  durable = await stack.startApi({ REDIS_DURABILITY: 'replicated', REDIS_DURABILITY_TIMEOUT_MS: '1000' });
}, 120_000);

interface Posted {
  api: 'durable' | 'plain';
  user: SiwfUser;
  status: number;
  referenceId?: string;
}

interface RequestRecord {
  state: string;
  msaId?: string;
  error?: { message: string };
  history: { state: string; at: string }[];
}

/** How many of the records failed, by the error they name. */
function failuresOf(records: Iterable<RequestRecord | 'lost'>): Record<string, number> {
  const reasons: Record<string, number> = {};
  for (const record of records) {
    if (record === 'lost' || record.state !== 'failed') continue;
    const reason = record.error?.message ?? 'no error recorded';
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  return reasons;
}

/** Reads each request until it is final (finalized or failed) or known lost (no record), for at most `timeoutMs`. */
async function finalRecords(referenceIds: string[], timeoutMs: number): Promise<Map<string, RequestRecord | 'lost'>> {
  const final = new Map<string, RequestRecord | 'lost'>();
  await waitUntil(
    async () => {
      for (const referenceId of referenceIds) {
        if (final.has(referenceId)) continue;
        const answer = await stack.call('GET', `/v1/requests/${referenceId}`);
        const record = answer.status === 200 ? (answer.body as unknown as RequestRecord) : undefined;
        if (answer.status === 404) final.set(referenceId, 'lost');
        else if (record && (record.state === 'finalized' || record.state === 'failed')) final.set(referenceId, record);
      }
      return final.size === referenceIds.length;
    },
    timeoutMs,
    () => `${referenceIds.length - final.size} of ${referenceIds.length} sign-ups final`,
    // What is not final by then is counted (and, for a durable sign-up, fails the test) below.
  ).catch(() => undefined);
  return final;
}

/** `primaryKills` primaries killed in a row mid-sign-ups (each promoted one as soon as it is named); checks and figures. */
async function drill(primaryKills: number): Promise<void> {
  const startedAt = Date.now();
  const apis = { durable, plain: stack.api };
  const components = [durable, stack.api, ...stack.workers];
  const pids = components.map((component) => component.pid);

  const {
    answers: posted,
    killedAt,
    primary,
    readiness,
  } = await killPrimaryUnderLoad<Posted>({
    group: stack.sentinel!,
    componentUrls: components.map((component) => component.url),
    count: SIGN_UPS,
    ratePerSecond: RATE_PER_SECOND,
    killAfter: KILL_AFTER,
    primaryKills,
    send: async (index) => {
      const api = index % 2 === 0 ? 'durable' : 'plain';
      const user = SiwfUser.create('sr25519');
      try {
        const answer = await callJson(apis[api].url, 'POST', '/v2/accounts/siwf', {
          authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(user)),
        });
        const acknowledged = answer.status === 200 && answer.body.signUpStatus === 'queued';
        return {
          api,
          user,
          status: answer.status,
          ...(acknowledged ? { referenceId: answer.body.signUpReferenceId as string } : {}),
        };
      } catch {
        return { api, user, status: 0 };
      }
    },
  });

  const acknowledged = (api: Posted['api']) => posted.filter((post) => post.api === api && post.referenceId);
  const durableSignUps = acknowledged('durable');
  const plainSignUps = acknowledged('plain');

  // Every acknowledged durable sign-up ends finalized (checked below), and nothing is left that could notify
  // again: no job waiting, running or delayed, no transaction still followed.
  const records = await finalRecords(
    durableSignUps.map(({ referenceId }) => referenceId!),
    240_000,
  );
  const webhooksOf = (referenceId: string) =>
    stack.receiver.received.filter((webhook) => (webhook.body as { referenceId?: string }).referenceId === referenceId);
  await waitUntil(
    async () => durableSignUps.every(({ referenceId }) => webhooksOf(referenceId!).length >= 1),
    120_000,
    'a webhook for every durable sign-up',
    // One that never came fails the checks below, which name it.
  ).catch(() => undefined);
  await waitUntil(stack.settled, 120_000, 'the queues and the transaction tracker settled');
  // Without durability: what the primary acknowledged and the failover lost (no record, or never finalized).
  const plainFinal = await finalRecords(
    plainSignUps.map(({ referenceId }) => referenceId!),
    60_000,
  );
  const plainStates = plainSignUps.map(({ referenceId }) => {
    const record = plainFinal.get(referenceId!);
    return record === undefined ? 'unfinished' : record === 'lost' ? 'lost' : record.state;
  });

  // On chain, by each durable user's key: the MSA the record and the webhook name.
  const queries = new ChainQueries(stack.chain.api);
  const onChain = new Map<string, string | undefined>();
  for (const { user, referenceId } of durableSignUps)
    onChain.set(referenceId!, (await queries.msaIdOf(user.address))?.toString());
  // One notification per sign-up: every delivery of it carries the same webhook-id. A delivery whose completion
  // went with the old primary is sent again with that id, which receivers drop (the webhook contract): counted.
  const notices = (referenceId: string) =>
    new Set(webhooksOf(referenceId).map((webhook) => webhook.headers['webhook-id'] ?? '')).size;
  const durableFailures = durableSignUps.filter(({ referenceId }) => {
    const record = records.get(referenceId!);
    if (record === undefined || record === 'lost') return true;
    const webhooks = webhooksOf(referenceId!);
    const webhook = webhooks[0];
    const body = webhook?.body as { transactionType?: string; status?: string; msaId?: string } | undefined;
    return !(
      record.state === 'finalized' &&
      record.history.filter((step) => step.state === 'finalized').length === 1 &&
      notices(referenceId!) === 1 &&
      verifyWebhook(WEBHOOK_SECRET, webhook!.headers, webhook!.raw) &&
      body?.transactionType === 'SIWF_SIGNUP' &&
      body.status === 'SUCCESS' &&
      body.msaId === record.msaId &&
      onChain.get(referenceId!) === record.msaId
    );
  });
  const durableRecords = [...records.values()].filter((record) => record !== 'lost');
  const durableMsaIds = new Set(durableSignUps.map(({ referenceId }) => onChain.get(referenceId!)));

  const counts = {
    primaryKills,
    durationMs: Date.now() - startedAt,
    posted: posted.length,
    durable: {
      acknowledged: durableSignUps.length,
      refused503: posted.filter((post) => post.api === 'durable' && post.status === 503).length,
      noAnswer: posted.filter((post) => post.api === 'durable' && post.status === 0).length,
      finalized: durableRecords.filter((record) => record.state === 'finalized').length,
      unfinished: durableSignUps.length - records.size,
      finalizedTwice: durableRecords.filter(
        (record) => record.history.filter((step) => step.state === 'finalized').length > 1,
      ).length,
      lost: [...records.values()].filter((record) => record === 'lost').length,
      notifiedTwice: durableSignUps.filter(({ referenceId }) => notices(referenceId!) > 1).length,
      sentAgainSameId: durableSignUps.filter(
        ({ referenceId }) => webhooksOf(referenceId!).length > notices(referenceId!),
      ).length,
      distinctMsas: durableMsaIds.size,
      failures: failuresOf(records.values()),
      failedChecks: durableFailures.map(({ referenceId }) => referenceId).slice(0, 5),
      failedCheckCount: durableFailures.length,
      firstFailed: durableFailures[0] && {
        record: records.get(durableFailures[0].referenceId!),
        webhooks: webhooksOf(durableFailures[0].referenceId!).map((webhook) => webhook.body),
        workerSaid: workerLogs.filter((line) => line.includes(durableFailures[0]!.referenceId!)).slice(0, 20),
      },
    },
    plain: {
      acknowledged: plainSignUps.length,
      refused503: posted.filter((post) => post.api === 'plain' && post.status === 503).length,
      noAnswer: posted.filter((post) => post.api === 'plain' && post.status === 0).length,
      finalized: plainStates.filter((state) => state === 'finalized').length,
      lost: plainStates.filter((state) => state === 'lost').length,
      neverFinalized: plainStates.filter((state) => state !== 'finalized' && state !== 'lost').length,
      failures: failuresOf(plainFinal.values()),
      notifiedTwice: plainSignUps.filter(({ referenceId }) => notices(referenceId!) > 1).length,
      sentAgainSameId: plainSignUps.filter(({ referenceId }) => webhooksOf(referenceId!).length > notices(referenceId!))
        .length,
    },
    // A request notified more than once (the plain api's are counted, not checked): each delivery's webhook-id and status.
    notifiedTwice: posted
      .filter(({ referenceId }) => referenceId && webhooksOf(referenceId).length > 1)
      .slice(0, 3)
      .map(({ api, referenceId }) => ({
        api,
        referenceId,
        deliveries: webhooksOf(referenceId!).map((webhook) => ({
          id: webhook.headers['webhook-id'],
          status: (webhook.body as { status?: string }).status,
        })),
      })),
    // What the workers' logs say of transactions recorded during the failover: submitted again by the scan, and
    // left to it by a job (recorded too late to submit, or already settled).
    tracker: {
      resubmitted: workerLogs.filter((line) => line.includes('abandoned transaction submitted again')).length,
      notResubmitted: workerLogs.filter((line) => line.includes('abandoned transaction not submitted again')).length,
      leftToTracker: workerLogs.filter((line) => line.includes('left to the tracker')).length,
    },
    primary,
    readiness: readiness.figuresSince(killedAt),
  };
  process.stdout.write(`Redis failover figures (sign-ups): ${JSON.stringify(counts)}\n`);

  expect(counts.durable.acknowledged).toBeGreaterThan(0);
  // Each check by itself (finalized once, one signed SIWF_SIGNUP webhook with its own webhook-id, the MSA on
  // chain by the user's key the same as the record's and the webhook's), for every durable sign-up.
  expect(counts.durable.failedCheckCount).toBe(0);
  expect(counts.durable.finalized).toBe(durableSignUps.length);
  expect(durableMsaIds.size).toBe(durableSignUps.length);
  expect(durableMsaIds.has(undefined)).toBe(false);
  // Readiness went 503 during the failover and came back; no component was restarted.
  expect(counts.readiness.unavailablePolls).toBeGreaterThan(0);
  expect(readiness.polls.at(-1)?.status).toBe(200);
  expect(components.map((component) => component.pid)).toEqual(pids);
  for (const component of components) expect(() => process.kill(component.pid, 0)).not.toThrow();
}

test(
  'kill -9 of the primary mid-sign-ups: every durable sign-up finalized, notified and created on chain once; readiness 503 then back; nothing restarted',
  () => drill(1),
  900_000,
);

test(
  'kill -9 of the primary mid-sign-ups, then of the replica promoted in its place: every durable sign-up finalized, notified and created on chain once; readiness 503 then back; nothing restarted',
  () => drill(2),
  900_000,
);
