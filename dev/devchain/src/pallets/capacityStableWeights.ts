import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { stringCamelCase } from '@polkadot/util';

/** ref_time per nanosecond. */
const NS = 1_000n;
/** Frequency v2.0.1's RocksDbWeight and its child-trie weights (runtime/common/src/weights). */
const READ = 89_193n * NS;
const WRITE = 122_587n * NS;
const CHILD_READ = 3_081_975n * NS;
const CHILD_WRITE = 41_457n * NS;

/** CAPACITY_EXTRINSIC_BASE_WEIGHT: what every Capacity transaction costs on top of its calls. */
export const CAPACITY_EXTRINSIC_BASE_WEIGHT = 105_455n * NS;

const db = (reads: bigint, writes: bigint) => reads * READ + writes * WRITE;
const child = CHILD_READ + CHILD_WRITE;
const bytes = (value: unknown) => BigInt((value as Codec).toU8a(true).length);
/** The bytes of every Add action (StatefulStorage::sum_add_actions_bytes). */
const addedBytes = (actions: unknown) =>
  [...(actions as Array<{ isAdd: boolean; asAdd: { data: Codec } }>)]
    .filter((action) => action.isAdd)
    .reduce((sum, action) => sum + BigInt(action.asAdd.data.toU8a(true).length), 0n);

type Args = Record<string, Codec & Record<string, unknown>>;

/**
 * The fixed ("stable") ref_time weights the runtime charges Capacity-eligible calls by, whatever they cost to
 * execute (capacity_stable_weights.rs with the runtime's database weights), by pallet and camelCase call.
 */
const STABLE: Record<string, Record<string, (args: Args) => bigint>> = {
  Msa: {
    createSponsoredAccountWithDelegation: (a) =>
      158_199_500n + 53_126n * BigInt((a.addProviderPayload?.intentIds as unknown[]).length) + db(10n, 7n),
    addPublicKeyToMsa: () => 237_413_000n + db(8n, 7n),
    grantDelegation: (a) =>
      146_783_884n + 138_064n * BigInt((a.addProviderPayload?.intentIds as unknown[]).length) + db(8n, 4n),
    addRecoveryCommitment: () => 124_481_000n + db(4n, 4n),
    recoverAccount: () => 154_850_000n + db(8n, 6n),
  },
  Messages: {
    addOnchainMessage: (a) => 42_194_321n + 959n * bytes(a.payload) + db(3n, 1n),
    addIpfsMessage: () => 32_704_000n + db(2n, 1n),
  },
  StatefulStorage: {
    applyItemActions: (a) => 37_727_324n + 1_075n * addedBytes(a.actions) + db(3n, 0n) + child,
    upsertPage: (a) => 39_664_500n + 101n * bytes(a.payload) + db(3n, 0n) + child,
    deletePage: () => 38_000_000n + db(3n, 0n) + child,
    applyItemActionsWithSignatureV2: (a) =>
      123_608_913n + 10_409n * addedBytes(a.payload?.actions) + db(2n, 0n) + child,
    upsertPageWithSignatureV2: (a) => 112_299_676n + 16_486n * bytes(a.payload?.payload) + db(2n, 0n) + child,
    deletePageWithSignatureV2: () => 114_000_000n + db(2n, 0n) + child,
  },
  Handles: {
    claimHandle: (a) => 110_925_526n + 113_003n * bytes(a.payload?.baseHandle) + db(3n, 3n),
    changeHandle: (a) => 118_375_742n + 217_518n * bytes(a.payload?.baseHandle) + db(3n, 4n),
  },
};

/** The stable weight of a call, or undefined when it is not Capacity-eligible. */
export function stableWeight(call: Call, palletName: string): bigint | undefined {
  const weigh = STABLE[palletName]?.[stringCamelCase(call.method)];
  if (!weigh) return undefined;
  const names = call.meta.args.map((arg) => stringCamelCase(arg.name.toString()));
  const args = Object.fromEntries(call.args.map((value, i) => [names[i] as string, value])) as Args;
  return weigh(args);
}

/** Whether the runtime lets a provider pay for the call with Capacity. */
export const isCapacityEligible = (palletName: string, method: string) =>
  STABLE[palletName]?.[stringCamelCase(method)] !== undefined;
