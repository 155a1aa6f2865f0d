import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import { ChainQueries } from '@frequency-gateway/chain';
import type { DevchainControl, ReorgAnswer } from '@frequency-gateway/devchain';
import { callJson, dsnpUsers, eachLimited, startWebhookReceiver, waitUntil } from '@frequency-gateway/devstack';
import type { ApiPromise } from '@polkadot/api';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { readBatch } from '@frequency-gateway/dsnp';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '@frequency-gateway/devstack/gateway';
import { deliveredOnce } from './clients/delivered.js';
import { GatewayClient, LOGIN_URI } from './clients/gatewayClient.js';
import type { SiwfUser } from '@frequency-gateway/devstack/siwf';
import { ReceivedWebhooks } from './clients/receiver.js';

/** Where the content watcher delivers the load's broadcasts, under the receiver. */
const WATCHER_PATH = '/watcher';

/** The content watcher's deliveries of broadcast announcements, to a receiver in this process. */
export interface WatchedBroadcasts {
  receiver: ReceivedWebhooks;
  /** The highest block the watcher's scanner has scanned (its worker's watcher_scanner_block). */
  scannedBlock(): Promise<number>;
}

/**
 * The account and content-publishing components on a devchain sealing every 500 ms with finality one block behind
 * (unless `options` says otherwise), `users` delegated users, and a client of theirs whose own chain reads go to the
 * devchain itself: what a steady load runs against. `options` adds to it (several nodes, more variables, log
 * capture); with `watcher`, the content watcher too, delivering every broadcast announcement to a receiver here.
 */
export async function startGatewayForLoad(
  users: number,
  options: Pick<LocalGatewayOptions, 'chainNodes' | 'keepChain' | 'finalityLag' | 'env' | 'roleOptions'> & {
    watcher?: boolean;
  } = {},
): Promise<{ gateway: LocalGateway; client: GatewayClient; watcher?: WatchedBroadcasts }> {
  const { watcher: withWatcher, ...gatewayOptions } = options;
  const receiver = withWatcher ? await startWebhookReceiver() : undefined;
  const watcherComponents = withWatcher
    ? ([
        ['content-watcher', 'api'],
        ['content-watcher', 'worker'],
      ] as const)
    : [];
  const gateway = await startLocalGateway({
    components: [
      ['account', 'api'],
      ['account', 'worker'],
      ['content-publishing', 'api'],
      ['content-publishing', 'worker'],
      ...watcherComponents,
    ],
    sealing: 'interval',
    blockTimeMs: 500,
    finalityLag: 1,
    genesis: dsnpUsers(users),
    serviceEnv: {
      account: { SIWF_V2_URI_VALIDATION: LOGIN_URI },
      'content-publishing': { BATCH_INTERVAL_SECONDS: '1' },
    },
    ...gatewayOptions,
    // The watcher's webhooks go to the receiver on loopback, and only there.
    env: {
      ...(receiver ? { OUTBOUND_POLICY: 'allowlist', OUTBOUND_ALLOWED_DESTINATIONS: '127.0.0.1' } : {}),
      ...gatewayOptions.env,
    },
  }).catch(async (error: unknown) => {
    await receiver?.stop();
    throw error;
  });
  const stopGateway = gateway.stop.bind(gateway);
  gateway.stop = async () => {
    const ended = await stopGateway();
    await receiver?.stop();
    return ended;
  };
  try {
    const watcherApi = gateway.components['content-watcher-api']?.url;
    const client = await GatewayClient.connect({
      account: gateway.components['account-api']!.url,
      contentPublishing: gateway.components['content-publishing-api']!.url,
      contentWatcher: watcherApi ?? gateway.components['content-publishing-api']!.url,
      ipfsGateway: gateway.backing.kubo!.gatewayUrl,
      chainUrl: gateway.backing.chain.url,
    });
    if (!receiver || !watcherApi) return { gateway, client };
    const received = new ReceivedWebhooks(receiver.url, receiver.url);
    const registered = await callJson(watcherApi, 'POST', '/v1/webhooks', {
      url: received.destination(WATCHER_PATH),
      announcementTypes: ['broadcast'],
    });
    if (registered.status !== 201) throw new Error(`the watcher's webhook not registered: ${registered.status}`);
    const workerUrl = gateway.components['content-watcher-worker']!.url;
    const scannedBlock = async () => {
      const text = await (await fetch(`${workerUrl}/metrics`)).text();
      const line = text.split('\n').find((entry) => entry.startsWith('watcher_scanner_block'));
      return line ? Number(line.split(' ').pop()) : -1;
    };
    return { gateway, client, watcher: { receiver: received, scannedBlock } };
  } catch (error) {
    await gateway.stop();
    throw error;
  }
}

/**
 * `startGatewayForLoad` with the content watcher, its finality three blocks behind (so that reorganisations two
 * deep are possible) unless `options` says otherwise: what the chain behaviour suites run against.
 */
export async function startWatchedGatewayForLoad(
  users: number,
  options: Omit<Parameters<typeof startGatewayForLoad>[1] & object, 'watcher'> = {},
): Promise<{ gateway: LocalGateway; client: GatewayClient; watcher: WatchedBroadcasts }> {
  await cryptoWaitReady();
  const started = await startGatewayForLoad(users, { finalityLag: 3, ...options, watcher: true });
  return { ...started, watcher: started.watcher! };
}

/** What a steady load had accepted (202) and how many posts it saw refused. */
export interface LoadAccepted {
  /** Every broadcast of the load reads `<tag> #<number>`. */
  tag: string;
  broadcasts: string[];
  /** The number of each accepted broadcast, in the order of `broadcasts`. */
  numbers: number[];
  signUps: { referenceId: string; address: string }[];
  /** Handle changes accepted: the request, the user's address, and the base handle asked for. */
  handleChanges: { referenceId: string; address: string; handle: string }[];
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
  /**
   * Lanes posting one request after another; lane 0 signs a new user up (with a handle) at every tenth request, and
   * five requests later changes the handle of the oldest user signed up and not changed yet, once that is final.
   */
  lanes?: number;
}

/**
 * Broadcasts and sign-ups, one after another on each lane, until stopped: the steady load the chain behaviour
 * suites put the gateway under. A post that gets no 202 is counted as refused, not retried.
 */
export function startSteadyLoad(client: GatewayClient, options: SteadyLoadOptions): SteadyLoad {
  const { users, firstMsa = 2, lanes = 4 } = options;
  const tag = randomBytes(3).toString('hex');
  const load: SteadyLoad = {
    tag,
    broadcasts: [],
    numbers: [],
    signUps: [],
    handleChanges: [],
    refused: 0,
    reasons: new Set(),
    stop: async () => load,
  };
  let nextNumber = 0;
  const refuse = (reason: string) => {
    load.refused++;
    load.reasons.add(reason);
  };
  let running = true;
  /** Users signed up with a handle, in order, and whether their handle was changed already. */
  const members: { user: SiwfUser; referenceId: string; changed: boolean }[] = [];
  const signUp = async () => {
    try {
      const { user, referenceId } = await client.signUp(`ld${tag}${members.length}`);
      load.signUps.push({ referenceId, address: user.address });
      members.push({ user, referenceId, changed: false });
    } catch (error) {
      refuse(`sign-up: ${String(error)}`);
    }
  };
  /** Changes the oldest unchanged member's handle once their sign-up is final; else it broadcasts instead. */
  const changeHandle = async (n: number) => {
    const member = members.find((candidate) => !candidate.changed);
    if (!member || (await client.record(member.referenceId, 'account'))?.state !== 'finalized') return broadcast(0, n);
    member.changed = true;
    const handle = `mv${tag}${load.handleChanges.length}`;
    try {
      const answer = await client.handleChange(member.user, handle);
      if (answer.status === 200)
        load.handleChanges.push({
          referenceId: answer.body.referenceId as string,
          address: member.user.address,
          handle,
        });
      else refuse(`handle change: ${answer.status} ${JSON.stringify(answer.body?.message ?? answer.body)}`);
    } catch (error) {
      refuse(`handle change: ${String(error)}`);
    }
  };
  const broadcast = async (index: number, n: number) => {
    const path = `/v1/content/${firstMsa + (n % users)}/broadcast`;
    const number = nextNumber++;
    const content = { content: `${tag} #${number}`, published: new Date().toISOString() };
    try {
      const answer = await callJson(client.contentPublishing, 'POST', path, { content });
      if (answer.status === 202) {
        load.broadcasts.push(answer.body.referenceId as string);
        load.numbers.push(number);
      } else refuse(`broadcast: ${answer.status} ${JSON.stringify(answer.body?.message ?? answer.body)}`);
    } catch (error) {
      refuse(`broadcast: ${String(error)}`);
    }
  };
  const lane = async (index: number) => {
    for (let n = 0; running; n++) {
      if (index === 0 && n % 10 === 0) await signUp();
      else if (index === 0 && n % 10 === 5) await changeHandle(n);
      else await broadcast(index, n);
    }
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
 * Every accepted request finalized (none failed), each sign-up's MSA created, each handle change's handle on chain,
 * and as many broadcast rows on chain as broadcasts accepted: nothing lost and nothing sent twice; with `watcher`, each accepted broadcast delivered by
 * the content watcher once. Returns the figures for the suite's report line.
 */
export async function expectFinalizedOnce(
  client: GatewayClient,
  accepted: LoadAccepted,
  chain: {
    fromBlock: number;
    ipfsGatewayUrl: string;
    users: { first: number; count: number };
    watcher?: WatchedBroadcasts;
  },
  timeoutMs = 180_000,
): Promise<{ broadcasts: number; signUps: number; handleChanges: number; delivered?: number }> {
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
  const changes = await client.settled(
    accepted.handleChanges.map(({ referenceId }) => referenceId),
    timeoutMs,
    'account',
  );
  expect(changes.filter((record) => record.state !== 'finalized')).toEqual([]);
  const handles = await eachLimited(accepted.handleChanges, 8, async ({ address }) => {
    const msa = await queries.msaIdOf(address);
    return msa === undefined ? undefined : (await queries.handleOf(msa))?.base;
  });
  expect(handles).toEqual(accepted.handleChanges.map(({ handle }) => handle));
  expect(await broadcastRowsOnChain(client, chain.ipfsGatewayUrl, chain.fromBlock, chain.users)).toBe(
    accepted.broadcasts.length,
  );
  const figures = {
    broadcasts: accepted.broadcasts.length,
    signUps: accepted.signUps.length,
    handleChanges: accepted.handleChanges.length,
  };
  if (!chain.watcher) return figures;
  const watched = await deliveredOnce({
    receiver: chain.watcher.receiver,
    gateway: client,
    path: WATCHER_PATH,
    tag: accepted.tag,
    count: accepted.numbers.length,
    numbers: accepted.numbers,
    timeoutMs,
    scannedBlock: chain.watcher.scannedBlock,
  });
  expect({ lost: watched.lost, duplicated: watched.duplicated }).toEqual({ lost: 0, duplicated: 0 });
  return { ...figures, delivered: accepted.numbers.length };
}

/**
 * `rounds` reorganisations `depth` deep (3 of 2 unless told), each after four more best blocks (and, with
 * `scannedTo`, with sealing held until it answers true for the best block), the retracted blocks' transactions dropped (`dev_reorg`):
 * resolves with the retracted block hashes and how many transactions they dropped.
 */
export async function reorganiseDropping(
  api: ApiPromise,
  control: DevchainControl,
  options: { rounds?: number; depth?: number; scannedTo?: (best: number) => Promise<boolean> } = {},
): Promise<{ retracted: Set<string>; dropped: number }> {
  const { rounds = 3, depth = 2, scannedTo } = options;
  const retracted = new Set<string>();
  let dropped = 0;
  const best = async () => (await api.rpc.chain.getHeader()).number.toNumber();
  for (let round = 0; round < rounds; round++) {
    const from = await best();
    await waitUntil(async () => (await best()) >= from + 4, 30_000, 'four more best blocks');
    // A moving head is caught by a loaded scan only now and then: sealing is held while the scans catch up, so
    // that the blocks the reorganisation retracts are scanned ones (the load's transactions wait in the pool).
    let answer: ReorgAnswer;
    if (scannedTo) {
      const heldAt = await control.holdSealing();
      try {
        await waitUntil(async () => scannedTo(heldAt), 60_000, `the best block #${heldAt} scanned`);
        answer = await control.reorg(depth, { dropRetracted: true });
      } finally {
        await control.resumeSealing();
      }
    } else answer = await control.reorg(depth, { dropRetracted: true });
    for (const hash of answer.retracted) {
      retracted.add(hash);
      // Every extrinsic but the timestamp inherent was a transaction the reorganisation dropped.
      dropped += (await api.rpc.chain.getBlock(hash)).block.extrinsics.length - 1;
    }
  }
  return { retracted, dropped };
}
