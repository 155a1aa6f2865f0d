import { scanKeys } from '@frequency-gateway/platform';
import { SIGNING_KEYSPACE } from '@frequency-gateway/chain';
import { slotsOfKeyspaces, waitUntil } from '@frequency-gateway/devstack';
import type { Cluster } from 'ioredis';
import { KEYSPACE, useAccountStack } from './support/stack.js';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';

// The account service, unchanged, on a 3-primary Redis Cluster (REDIS_CLUSTER_NODES): its scripts and
// transactions touch several keys at once, which a cluster allows only within one hash slot.
const stack = useAccountStack({ redis: 'cluster' });

test('a sign-up on a Redis Cluster: queued, finalized, its webhook delivered once; every key under {account}', async () => {
  const user = SiwfUser.create('sr25519');
  const answer = await stack.call('POST', '/v2/accounts/siwf', {
    authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(user)),
  });
  expect([answer.status, answer.body.signUpStatus]).toEqual([200, 'queued']);
  const referenceId = answer.body.signUpReferenceId as string;

  const webhook = await stack.webhookOf(referenceId);
  expect(webhook).toMatchObject({ transactionType: 'SIWF_SIGNUP', status: 'SUCCESS', accountId: user.address });
  const record = await stack.call('GET', `/v1/requests/${referenceId}`);
  expect(record.body).toMatchObject({ state: 'finalized', msaId: webhook.msaId });
  const lookup = await stack.call('GET', `/v1/accounts/account/${user.address}`);
  expect([lookup.status, lookup.body.msaId]).toEqual([200, webhook.msaId]);

  // Exactly once: nothing more arrives once nothing is left that could send it.
  await waitUntil(stack.settled, 30_000, 'the queues and the transaction tracker settled');
  await stack.webhookOf(referenceId);

  // Every key the components wrote is in the service's keyspace or the signing key's (shared with the other
  // services), each in one slot, on one primary.
  const keys: string[] = [];
  for await (const key of scanKeys(stack.admin as Cluster, '*')) keys.push(key);
  const keyspaces = [`${KEYSPACE}:`, `${SIGNING_KEYSPACE}:`];
  const spread = await slotsOfKeyspaces(keys, keyspaces, (key) => stack.admin.cluster('KEYSLOT', key));
  expect(spread).toEqual({ strays: [], slots: { [`${KEYSPACE}:`]: 1, [`${SIGNING_KEYSPACE}:`]: 1 } });
}, 180_000);
