import type { KeyringPair } from '@polkadot/keyring/types';
import { BasePath, BasePathError, journaledUpgrade } from './chain/basePath.js';
import { Chain, SealError, type Sealing } from './chain/chain.js';
import { accountHex, devKeyring } from './genesis/devAccounts.js';
import { buildMetadata } from './metadata/buildMetadata.js';
import { NEXT_RELEASE } from './metadata/releases.js';
import { balancesPallet } from './pallets/balances.js';
import { systemPallet } from './pallets/system.js';
import { capacityPallet } from './pallets/capacity/index.js';
import { frequencyTxPaymentPallet } from './pallets/frequencyTxPayment.js';
import { handleLimits, handlesPallet } from './pallets/handles/index.js';
import { messagesPallet } from './pallets/messages.js';
import { msaPallet } from './pallets/msa/index.js';
import { devProviderGenesis } from './genesis/devProvider.js';
import { extraGenesis, type ExtraGenesis } from './genesis/extraGenesis.js';
import { schemasPallet } from './pallets/schemas/index.js';
import { dsnpModels, genesisOnlyModels } from './pallets/schemas/models.js';
import { statefulStoragePallet } from './pallets/statefulStorage/index.js';
import { sudoPallet } from './pallets/sudo.js';
import { timestampPallet } from './pallets/timestamp.js';
import { utilityPallet } from './pallets/utility.js';
import { RpcMethods } from './rpc/methods.js';
import { serveRpc } from './rpc/server.js';
import { Runtime } from './runtime/runtime.js';

/** Blocks a devchain keeps unless told otherwise: a day of six-second blocks. */
export const DEFAULT_KEEP_BLOCKS = 14_400;

export interface DevchainOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  host?: string;
  sealing?: Sealing;
  /** Interval sealing: time between blocks; instant sealing with a finality lag: pace of the blocks that let finality catch up. */
  blockTimeMs?: number;
  /**
   * Interval sealing: seal a block every block time even with nothing to include (true by default, unlike a
   * node's `--sealing-create-empty-blocks`, so that block numbers advance as tests expect).
   */
  createEmptyBlocks?: boolean;
  /** How many blocks the finalized head trails the best block. */
  finalityLag?: number;
  now?: () => number;
  /** Future extrinsics the pool keeps before dropping the oldest (default 512, as a node). */
  futureLimit?: number;
  /** Extra genesis: providers, users with delegations and handles (see `readExtraGenesis`). */
  genesis?: ExtraGenesis;
  onInternalError?: (error: unknown, method: string) => void;
  /** Finality stalls once it reaches this block, until `dev_resumeFinality` (best blocks go on). */
  stallFinalityAt?: number;
  /** Every subscription open when this block is sealed sends nothing more (sockets stay open; new ones work). */
  silenceSubscriptionsAt?: number;
  /**
   * Every this many sealed blocks, the best chain is reorganised by `reorgDepth` blocks (as far as finality
   * allows), as a flaky network does. Needs a finality lag of at least the depth.
   */
  reorgEvery?: number;
  /** Depth of the reorganisations `reorgEvery` makes: 1–3 (1 by default). */
  reorgDepth?: number;
  /**
   * How many of the latest blocks keep their state, header and body (`DEFAULT_KEEP_BLOCKS` by default, so that a
   * devchain running for days holds a bounded past); older finalized ones are forgotten, all but genesis's header.
   * `'archive'` keeps every block.
   */
  keepBlocks?: number | 'archive';
  /**
   * Keep the chain in this directory (a node's `--base-path`): every sealed block and finality move is written
   * as it happens, and a devchain started on the same directory with the same genesis options replays them and
   * goes on from the same best and finalized blocks (the transaction pool is not kept). Without it the chain
   * lives in memory only.
   */
  basePath?: string;
  /**
   * Upgrade the runtime at this block, from v2.0.1 (spec 189) to v2.1.0-rc2 (spec 191; see
   * metadata/releases.ts), as `dev_upgradeRuntime` does.
   */
  upgradeRuntimeAt?: number;
}

export interface Devchain {
  /** ws://… for WsProvider */
  url: string;
  /** http://… for one-shot JSON-RPC calls */
  httpUrl: string;
  port: number;
  chain: Chain;
  runtime: Runtime;
  close(): Promise<void>;
}

/** Starts a devchain: builds the runtime, writes genesis, seals blocks and serves JSON-RPC. */
export async function startDevchain(options: DevchainOptions = {}): Promise<Devchain> {
  const built = await buildMetadata();
  const { facts } = built;
  const balances = facts.constants.Balances as Record<string, { value: unknown }>;
  const existentialDeposit = BigInt(String(balances.existentialDeposit?.value ?? 0));
  const keyring = await devKeyring(facts.chain.ss58Prefix);
  const msa = facts.constants.Msa as Record<string, { value: unknown }>;
  const limit = (name: string) => Number(msa[name]?.value);
  const capacityFacts = facts.constants.Capacity as Record<string, { value: unknown }>;
  const capacityConstants = {
    minimumStakingAmount: BigInt(String(capacityFacts.minimumStakingAmount?.value)),
    minimumTokenBalance: BigInt(String(capacityFacts.minimumTokenBalance?.value)),
    capacityPerTokenPerBillion: BigInt(String(capacityFacts.capacityPerToken?.value)),
    maxEpochLength: Number(capacityFacts.maxEpochLength?.value),
    maxUnlockingChunks: Number(capacityFacts.maxUnlockingChunks?.value),
    unstakingThawPeriod: Number(capacityFacts.unstakingThawPeriod?.value),
  };
  const alice = accountHex(keyring.getPairs()[0] as KeyringPair);
  const maxBatch = Number(
    (facts.constants.FrequencyTxPayment as Record<string, { value: unknown }>).maximumCapacityBatchLength?.value,
  );
  const statefulConstants = facts.constants.StatefulStorage as Record<string, { value: unknown }>;
  const schemaConstants = facts.constants.Schemas as Record<string, { value: unknown }>;
  const palletNames = new Map(built.metadata.asV14.pallets.map((p) => [p.index.toNumber(), p.name.toString()]));
  const runtime = new Runtime(built, [
    systemPallet(),
    timestampPallet(),
    balancesPallet(existentialDeposit),
    utilityPallet(),
    sudoPallet(alice),
    schemasPallet(
      facts,
      { byName: await dsnpModels(), byId: genesisOnlyModels() },
      {
        minSchemaModelSizeBytes: Number(schemaConstants.minSchemaModelSizeBytes?.value),
        maxSchemaSettingsPerSchema: Number(schemaConstants.maxSchemaSettingsPerSchema?.value),
      },
    ),
    msaPallet(
      {
        maxPublicKeysPerMsa: limit('maxPublicKeysPerMsa'),
        maxGrantsPerDelegation: limit('maxGrantsPerDelegation'),
        maxProviderNameSize: limit('maxProviderNameSize'),
        mortalityWindowSize: limit('mortalityWindowSize'),
        maxSignaturesStored: limit('maxSignaturesStored'),
      },
      existentialDeposit,
    ),
    capacityPallet(capacityConstants),
    messagesPallet(
      Number(
        (facts.constants.Messages as Record<string, { value: unknown }> | undefined)?.messagesMaxPayloadSizeBytes
          ?.value ?? 3072,
      ),
    ),
    handlesPallet(handleLimits(facts)),
    statefulStoragePallet({
      maxItemizedPageSizeBytes: Number(statefulConstants.maxItemizedPageSizeBytes?.value),
      maxPaginatedPageId: Number(statefulConstants.maxPaginatedPageId?.value),
      mortalityWindowSize: Number(statefulConstants.mortalityWindowSize?.value),
    }),
    frequencyTxPaymentPallet(palletNames, existentialDeposit, maxBatch),
    devProviderGenesis(alice, limit('maxPublicKeysPerMsa'), capacityConstants),
    ...(options.genesis
      ? [
          extraGenesis(options.genesis, {
            maxKeys: limit('maxPublicKeysPerMsa'),
            maxGrantsPerDelegation: limit('maxGrantsPerDelegation'),
            maxProviderNameSize: limit('maxProviderNameSize'),
            capacity: capacityConstants,
            handles: handleLimits(facts),
          }),
        ]
      : []),
  ]);
  const endowment = BigInt((facts.devGenesis.balances as { endowment: string }).endowment);
  const chain = new Chain(runtime, {
    sealing: options.sealing ?? 'instant',
    blockTimeMs: options.blockTimeMs ?? (options.sealing === 'interval' ? facts.chain.blockTimeMs : 100),
    finalityLag: options.finalityLag ?? 0,
    ...(options.createEmptyBlocks === undefined ? {} : { createEmptyBlocks: options.createEmptyBlocks }),
    endowed: [
      ...keyring.getPairs().map((pair) => ({ account: accountHex(pair), free: endowment })),
      ...(options.genesis?.providers ?? []).map((p) => ({ account: p.account, free: p.balance ?? endowment })),
      ...(options.genesis?.users ?? []).flatMap((u) => (u.balance ? [{ account: u.account, free: u.balance }] : [])),
    ],
    facts: {
      existentialDeposit,
      // Stand-ins for the weight-based fee: a base fee of 0.001 UNIT plus the runtime's per-byte fee.
      baseFee: 100_000n,
      byteFee: BigInt(String((facts.chain as unknown as { transactionByteFee: number }).transactionByteFee)),
    },
    ...(options.now ? { now: options.now } : {}),
    ...(options.futureLimit === undefined ? {} : { futureLimit: options.futureLimit }),
    ...(options.stallFinalityAt === undefined ? {} : { stallFinalityAt: options.stallFinalityAt }),
    ...(options.reorgEvery === undefined ? {} : { reorgEvery: options.reorgEvery }),
    ...(options.reorgDepth === undefined ? {} : { reorgDepth: options.reorgDepth }),
    ...(options.keepBlocks === 'archive' ? {} : { keepBlocks: options.keepBlocks ?? DEFAULT_KEEP_BLOCKS }),
    ...(options.onInternalError
      ? { onInternalError: (error: unknown) => options.onInternalError?.(error, 'dispatch') }
      : {}),
  });
  let upgraded: Promise<Runtime> | undefined;
  /** Schedules the one upgrade the devchain models (v2.0.1 to v2.1.0-rc2); its runtime is built on first use. */
  const upgradeRuntime = async (at?: number) => {
    const running = chain.runtime.facts.runtimeVersion.specVersion;
    if (running !== facts.runtimeVersion.specVersion || chain.upgradeScheduledAt !== undefined)
      throw new SealError(
        16_000,
        `the devchain models one runtime upgrade, from spec ${facts.runtimeVersion.specVersion} to ${NEXT_RELEASE.specVersion} ` +
          `(${NEXT_RELEASE.name}); it runs spec ${running}` +
          (chain.upgradeScheduledAt === undefined ? '' : ` and upgrades at #${chain.upgradeScheduledAt}`),
      );
    upgraded ??= buildMetadata(NEXT_RELEASE).then((next) => runtime.upgradedTo(next));
    const next = await upgraded;
    return { at: chain.scheduleUpgrade(next, at), specVersion: NEXT_RELEASE.specVersion };
  };
  const methods = new RpcMethods(chain, {
    upgradeRuntime,
    ...(options.silenceSubscriptionsAt === undefined ? {} : { silenceSubscriptionsAt: options.silenceSubscriptionsAt }),
  });
  // An upgrade the base path's chain enacted is scheduled again, for the replay to enact it at the same block.
  const journaled = options.basePath === undefined ? undefined : journaledUpgrade(options.basePath);
  if (journaled && journaled.specVersion !== NEXT_RELEASE.specVersion)
    throw new BasePathError(
      options.basePath as string,
      `its chain upgraded to spec ${journaled.specVersion}, which this devchain does not model`,
    );
  const upgradeAt = journaled?.at ?? options.upgradeRuntimeAt;
  if (upgradeAt !== undefined) await upgradeRuntime(upgradeAt);
  const basePath = options.basePath === undefined ? undefined : BasePath.open(options.basePath, chain);
  if (basePath) chain.keepJournal(basePath);
  let server: Awaited<ReturnType<typeof serveRpc>>;
  try {
    server = await serveRpc(methods, {
      port: options.port ?? 0,
      ...(options.host ? { host: options.host } : {}),
      ...(options.onInternalError ? { onInternalError: options.onInternalError } : {}),
    });
  } catch (error) {
    basePath?.close();
    throw error;
  }
  chain.start();
  return {
    url: server.url,
    httpUrl: server.httpUrl,
    port: server.port,
    chain,
    runtime,
    close: async () => {
      chain.stop();
      await server.close();
      basePath?.close();
    },
  };
}
