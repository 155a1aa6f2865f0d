import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import { ChainQueries } from '@frequency-gateway/chain';
import { callJson, dsnpUsers, eachLimited } from '@frequency-gateway/devstack';
import { readBatch } from '@frequency-gateway/dsnp';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '@frequency-gateway/devstack/gateway';
import { GatewayClient, LOGIN_URI } from './clients/gatewayClient.js';

/**
 * The account and content-publishing components on a devchain sealing every 500 ms with finality one block behind (unless `options` says otherwise),
 * `users` delegated users, and a client of theirs whose own chain reads go to the devchain itself: what a steady load
 * runs against. `options` adds to it (several nodes, more variables, log capture).
 */
export async function startGatewayForLoad(
  users: number,
  options: Pick<LocalGatewayOptions, 'chainNodes' | 'keepChain' | 'finalityLag' | 'env' | 'roleOptions'> = {},
): Promise<{ gateway: LocalGateway; client: GatewayClient }> {
  const gateway = await startLocalGateway({
    components: [
      ['account', 'api'],
      ['account', 'worker'],
      ['content-publishing', 'api'],
      ['content-publishing', 'worker'],
    ],
    sealing: 'interval',
    blockTimeMs: 500,
    finalityLag: 1,
    genesis: dsnpUsers(users),
    serviceEnv: {
      account: { SIWF_V2_URI_VALIDATION: LOGIN_URI },
      'content-publishing': { BATCH_INTERVAL_SECONDS: '1' },
    },
    ...options,
  });
  try {
    const client = await GatewayClient.connect({
      account: gateway.components['account-api']!.url,
      contentPublishing: gateway.components['content-publishing-api']!.url,
      contentWatcher: gateway.components['content-publishing-api']!.url,
      ipfsGateway: gateway.backing.kubo!.gatewayUrl,
      chainUrl: gateway.backing.chain.url,
    });
    return { gateway, client };
  } catch (error) {
    await gateway.stop();
    throw error;
  }
}

/** What a steady load had accepted (202) and how many posts it saw refused. */
export interface LoadAccepted {
  broadcasts: string[];
  signUps: { referenceId: string; address: string }[];
  refused: number;
  /** Why posts were refused (the answer's status and message, or the error), each reason once. */
  reasons: Set<string>;
}

export interface SteadyLoad extends LoadAccepted {
  /** Ends the lanes after their request in flight; resolves with what was accepted. */
  stop(): Promise<LoadAccepted>;
}

export interface SteadyLoadOptions {
  /** The users (MSA ids `firstMsa` … `firstMsa + users − 1`, delegated to the provider) that broadcast. */
  users: number;
  firstMsa?: number;
  /** Lanes posting one request after another; lane 0 signs a new user up at every tenth request. */
  lanes?: number;
}

/**
 * Broadcasts and sign-ups, one after another on each lane, until stopped: the steady load the chain behaviour
 * suites put the gateway under. A post that gets no 202 is counted as refused, not retried.
 */
export function startSteadyLoad(client: GatewayClient, options: SteadyLoadOptions): SteadyLoad {
  const { users, firstMsa = 2, lanes = 4 } = options;
  const tag = randomBytes(3).toString('hex');
  const load: SteadyLoad = { broadcasts: [], signUps: [], refused: 0, reasons: new Set(), stop: async () => load };
  const refuse = (reason: string) => {
    load.refused++;
    load.reasons.add(reason);
  };
  let running = true;
  const signUp = async () => {
    try {
      const { user, referenceId } = await client.signUp(undefined);
      load.signUps.push({ referenceId, address: user.address });
    } catch (error) {
      refuse(`sign-up: ${String(error)}`);
    }
  };
  const broadcast = async (index: number, n: number) => {
    const path = `/v1/content/${firstMsa + (n % users)}/broadcast`;
    const content = { content: `${tag} ${index}.${n}`, published: new Date().toISOString() };
    try {
      const answer = await callJson(client.contentPublishing, 'POST', path, { content });
      if (answer.status === 202) load.broadcasts.push(answer.body.referenceId as string);
      else refuse(`broadcast: ${answer.status} ${JSON.stringify(answer.body?.message ?? answer.body)}`);
    } catch (error) {
      refuse(`broadcast: ${String(error)}`);
    }
  };
  const lane = async (index: number) => {
    for (let n = 0; running; n++) await (index === 0 && n % 10 === 0 ? signUp() : broadcast(index, n));
  };
  const running$ = Promise.all(Array.from({ length: lanes }, (_, index) => lane(index)));
  load.stop = async () => {
    running = false;
    await running$;
    return load;
  };
  return load;
}

/** How many broadcast rows of users `firstMsa` … are on chain since `fromBlock`, read through their batch files. */
export async function broadcastRowsOnChain(
  client: GatewayClient,
  ipfsGatewayUrl: string,
  fromBlock: number,
  users: { first: number; count: number },
): Promise<number> {
  const queries = new ChainQueries(client.chain.api);
  const intent = (await queries.intentByName('dsnp.broadcast'))!;
  const best = (await queries.bestBlock()).number;
  let rows = 0;
  for (const message of await queries.messages(intent.intentId, fromBlock, best + 1)) {
    const file = await fetch(`${ipfsGatewayUrl}/ipfs/${message.cid}`);
    const batch = await readBatch(new Uint8Array(await file.arrayBuffer()));
    rows += batch.filter(
      (row) => Number(row.fromId) >= users.first && Number(row.fromId) < users.first + users.count,
    ).length;
  }
  return rows;
}

/**
 * Every accepted request finalized (none failed), each sign-up's MSA created, and as many broadcast rows on chain
 * as broadcasts accepted: nothing lost and nothing sent twice. Returns the figures for the suite's report line.
 */
export async function expectFinalizedOnce(
  client: GatewayClient,
  accepted: LoadAccepted,
  chain: { fromBlock: number; ipfsGatewayUrl: string; users: { first: number; count: number } },
  timeoutMs = 180_000,
): Promise<{ broadcasts: number; signUps: number }> {
  const records = await client.settled(accepted.broadcasts, timeoutMs);
  expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
  const signUpRecords = await client.settled(
    accepted.signUps.map(({ referenceId }) => referenceId),
    timeoutMs,
    'account',
  );
  expect(signUpRecords.filter((record) => record.state !== 'finalized')).toEqual([]);
  const queries = new ChainQueries(client.chain.api);
  const msas = await eachLimited(accepted.signUps, 8, ({ address }) => queries.msaIdOf(address));
  expect(msas.filter((msa) => msa === undefined)).toEqual([]);
  expect(await broadcastRowsOnChain(client, chain.ipfsGatewayUrl, chain.fromBlock, chain.users)).toBe(
    accepted.broadcasts.length,
  );
  return { broadcasts: accepted.broadcasts.length, signUps: accepted.signUps.length };
}
