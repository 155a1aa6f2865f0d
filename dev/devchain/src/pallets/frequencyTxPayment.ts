import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { stringCamelCase } from '@polkadot/util';
import type { AccountHex, DispatchContext, PalletRuntime, ValidationContext } from '../runtime/context.js';
import { DispatchFailure, INVALID, ModuleError } from '../runtime/errors.js';
import { readAccount } from './balances.js';
import { availableCapacity, readLedger, withdrawCapacity } from './capacity/ledger.js';
import { keyCount, msaOf, type Reader } from './msa/accounts.js';
import { bigintOf } from '../runtime/codecs.js';
import { isEthereumAccount } from '@frequency-gateway/chain';
import { runBatch } from './utility.js';
import { CAPACITY_EXTRINSIC_BASE_WEIGHT, isCapacityEligible, stableWeight } from './capacityStableWeights.js';

/** Custom(n) codes of ChargeFrqTransactionPayment (TargetCapacityNotFound, 2, is declared but never raised). */
const CUSTOM = { callIsNotCapacityEligible: 0, invalidMsaKey: 1 } as const;

export interface CapacityFee {
  baseFee: bigint;
  lenFee: bigint;
  adjustedWeightFee: bigint;
}

/**
 * The runtime's compute_capacity_fee: the fee of CAPACITY_EXTRINSIC_BASE_WEIGHT, the fee of the calls' stable
 * weights together, and 10,000 per byte of the whole extrinsic.
 */
export function capacityFee(weights: readonly bigint[], length: number): CapacityFee {
  return {
    baseFee: weightToFee(CAPACITY_EXTRINSIC_BASE_WEIGHT),
    adjustedWeightFee: weightToFee(weights.reduce((sum, weight) => sum + weight, 0n)),
    lenFee: 10_000n * BigInt(length),
  };
}

/**
 * The runtime's WeightToFee: ExtrinsicBaseWeight (101,017,000 ref_time in v2.0.1's benchmarks) costs 0.1 CENT
 * = 100,000 planck, linearly (no fee multiplier on a development chain), as its polynomial computes it: a Perbill
 * coefficient, CENT / (10 × base) rounded down, times the weight, rounded to the nearest planck (a tie down).
 */
export function weightToFee(refTime: bigint): bigint {
  const product = refTime * FEE_PER_WEIGHT_PARTS;
  const fee = product / BILLION;
  return product % BILLION > BILLION / 2n ? fee + 1n : fee;
}
const BILLION = 1_000_000_000n;
const EXTRINSIC_BASE_WEIGHT = 101_017_000n;
const FEE_PER_WEIGHT_PARTS = (1_000_000n * BILLION) / (10n * EXTRINSIC_BASE_WEIGHT);

export const totalFee = (fee: CapacityFee) => fee.baseFee + fee.adjustedWeightFee + fee.lenFee;

/**
 * Whether a call is `add_public_key_to_msa` adding an Ethereum-style key to an MSA that has only the owner's
 * key (the runtime's key_eligible_for_subsidized_addition), which Capacity pays 70 % less for.
 */
function isSubsidizedKeyAddition(reader: Reader, call: Call, palletName: string): boolean {
  if (palletName !== 'Msa' || stringCamelCase(call.method) !== 'addPublicKeyToMsa') return false;
  const [owner, , , payload] = call.args as unknown as [Codec, Codec, Codec, { msaId: Codec; newPublicKey: Codec }];
  if (!isEthereumAccount(payload.newPublicKey.toU8a(true))) return false;
  const msaId = msaOf(reader, owner.toHex() as AccountHex);
  return msaId !== undefined && BigInt(msaId) === bigintOf(payload.msaId) && keyCount(reader, msaId) === 1;
}

/**
 * What a Capacity transaction is charged: the fee of all its calls, less 70 % of the fee the subsidized
 * calls alone would cost (base and length included, as the runtime computes the reduction).
 */
export function capacityCharge(reader: Reader, calls: Call[], length: number, palletName: (call: Call) => string) {
  const weights = calls.map((call) => stableWeight(call, palletName(call)) ?? 0n);
  const full = totalFee(capacityFee(weights, length));
  const subsidized = weights.filter((_, i) =>
    isSubsidizedKeyAddition(reader, calls[i] as Call, palletName(calls[i] as Call)),
  );
  if (subsidized.length === 0) return full;
  const reduction = (totalFee(capacityFee(subsidized, length)) * 7n) / 10n;
  return full - reduction;
}

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
  const eligible = (call: Call) => isCapacityEligible(palletNames.get(call.callIndex[0] as number) ?? '', call.method);

  const palletOf = (call: Call) => palletNames.get(call.callIndex[0] as number) ?? '';

  // The runtime's order: every call eligible (Custom 0), the key's total balance at least the existential
  // deposit (Payment), the key's MSA (Custom 1), then enough Capacity for the fee (Payment; an MSA that never
  // staked has none).
  const validate = (context: ValidationContext) => {
    const { call, length } = context;
    const calls = innerCalls(call);
    if (!calls.every(eligible)) throw INVALID.custom(CUSTOM.callIsNotCapacityEligible);
    const account = readAccount(context, context.signer);
    if (account.data.free + account.data.reserved < existentialDeposit) throw INVALID.payment();
    const msaId = msaOf(context, context.signer);
    if (msaId === undefined) throw INVALID.custom(CUSTOM.invalidMsaKey);
    const ledger = readLedger(context, msaId);
    const available = ledger ? availableCapacity(context, ledger) : 0n;
    if (available < capacityCharge(context, calls, length, palletOf)) throw INVALID.payment();
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
      const amount = capacityCharge(context, innerCalls(call), length, palletOf);
      if (!withdrawCapacity(context, msaId, amount)) throw INVALID.payment();
      context.deposit('Capacity', 'CapacityWithdrawn', { msaId, amount });
    },
  };
}
