import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { stringCamelCase } from '@polkadot/util';
import type { AccountHex, DispatchContext, PalletRuntime, ValidationContext } from '../runtime/context.js';
import { DispatchFailure, INVALID, ModuleError } from '../runtime/errors.js';
import { readAccount, spendable } from './balances.js';
import { availableCapacity, readLedger, withdrawCapacity } from './capacity/ledger.js';
import { msaOf } from './msa/accounts.js';
import { runBatch } from './utility.js';

/** The calls the runtime lets a provider pay for with Capacity (pallet → camelCase calls). */
export const CAPACITY_ELIGIBLE: Readonly<Record<string, readonly string[]>> = {
  Msa: [
    'addPublicKeyToMsa',
    'createSponsoredAccountWithDelegation',
    'grantDelegation',
    'addRecoveryCommitment',
    'recoverAccount',
  ],
  Messages: ['addIpfsMessage', 'addOnchainMessage'],
  StatefulStorage: [
    'applyItemActions',
    'upsertPage',
    'deletePage',
    'applyItemActionsWithSignatureV2',
    'upsertPageWithSignatureV2',
    'deletePageWithSignatureV2',
  ],
  Handles: ['claimHandle', 'changeHandle'],
};

/** Custom(n) codes of ChargeFrqTransactionPayment. */
const CUSTOM = { callIsNotCapacityEligible: 0, invalidMsaKey: 1, targetCapacityNotFound: 2 } as const;

export interface CapacityFee {
  baseFee: bigint;
  lenFee: bigint;
  adjustedWeightFee: bigint;
}

/**
 * Capacity fee: a base weight fee, a stand-in weight fee per inner call (the runtime uses benchmarked
 * "stable weights"; ≈340,000 is add_ipfs_message's), and 10,000 per byte of the whole extrinsic.
 */
export function capacityFee(innerCalls: number, length: number): CapacityFee {
  return { baseFee: 107_575n, adjustedWeightFee: 340_386n * BigInt(innerCalls), lenFee: 10_000n * BigInt(length) };
}

/**
 * The runtime's WeightToFee: ExtrinsicBaseWeight (101,017,000 ref_time in v2.0.1's benchmarks) costs 0.1 CENT
 * = 100,000 planck, linearly (no fee multiplier on a development chain).
 */
export const weightToFee = (refTime: bigint): bigint => (refTime * 100_000n) / EXTRINSIC_BASE_WEIGHT;
const EXTRINSIC_BASE_WEIGHT = 101_017_000n;

export const totalFee = (fee: CapacityFee) => fee.baseFee + fee.adjustedWeightFee + fee.lenFee;

export function innerCalls(call: Call): Call[] {
  const args = call.args as unknown as Codec[];
  return stringCamelCase(call.method) === 'payWithCapacity'
    ? [args[0] as unknown as Call]
    : [...(args[0] as unknown as Call[])];
}

export function frequencyTxPaymentPallet(
  palletNames: ReadonlyMap<number, string>,
  existentialDeposit: bigint,
  maxBatch: number,
): PalletRuntime {
  const eligible = (call: Call) =>
    CAPACITY_ELIGIBLE[palletNames.get(call.callIndex[0] as number) ?? '']?.includes(stringCamelCase(call.method)) ??
    false;

  const validate = (context: ValidationContext) => {
    const { call, length } = context;
    const msaId = msaOf(context, context.signer);
    if (msaId === undefined) throw INVALID.custom(CUSTOM.invalidMsaKey);
    if (!innerCalls(call).every(eligible)) throw INVALID.custom(CUSTOM.callIsNotCapacityEligible);
    if (spendable(readAccount(context, context.signer), 0n, false) < existentialDeposit) throw INVALID.payment();
    const ledger = readLedger(context, msaId);
    if (!ledger) throw INVALID.custom(CUSTOM.targetCapacityNotFound);
    if (availableCapacity(context, ledger) < totalFee(capacityFee(innerCalls(call).length, length)))
      throw INVALID.payment();
  };

  const signer = (context: DispatchContext): AccountHex => {
    if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
    return context.origin.who;
  };

  return {
    name: 'FrequencyTxPayment',
    calls: {
      payWithCapacity: (context, args) => context.dispatch(args.call as unknown as Call, context.origin),
      payWithCapacityBatchAll: (context, args) => {
        const calls = [...(args.calls as unknown as Call[])];
        if (calls.length > maxBatch) throw new ModuleError('FrequencyTxPayment', 'BatchedCallAmountExceedsMaximum');
        runBatch(context, calls, 'all');
      },
    },
    validate: { payWithCapacity: validate, payWithCapacityBatchAll: validate },
    // Validation ran just before (at pool entry and again in the block): the signer has an MSA with Capacity.
    chargeFee: (context, call, length) => {
      const who = signer(context);
      const msaId = msaOf(context, who) as number;
      const amount = totalFee(capacityFee(innerCalls(call).length, length));
      if (!withdrawCapacity(context, msaId, amount)) throw INVALID.payment();
      context.deposit('Capacity', 'CapacityWithdrawn', { msaId, amount });
    },
  };
}
