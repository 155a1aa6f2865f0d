import type { Codec } from '@polkadot/types/types';
import { bigintOf, numberOf, someOf, msaIdOf } from '../../runtime/codecs.js';
import type { AccountHex, BlockHookContext, DispatchContext, PalletRuntime } from '../../runtime/context.js';
import { DispatchFailure, ModuleError } from '../../runtime/errors.js';
import { readAccount, writeAccount } from '../balances.js';
import { isProvider } from '../msa/accounts.js';
import { currentEpoch, readLedger, writeLedger } from './ledger.js';

export interface CapacityConstants {
  minimumStakingAmount: bigint;
  minimumTokenBalance: bigint;
  /** Capacity issued per token staked, in parts per billion (2 % = 20,000,000). */
  capacityPerTokenPerBillion: bigint;
  maxEpochLength: number;
  maxUnlockingChunks: number;
  /** Epochs an unstaked amount stays frozen before it can be withdrawn. */
  unstakingThawPeriod: number;
}

interface UnlockChunk {
  value: bigint;
  thawAt: number;
}

const readUnlocks = (context: Context, staker: AccountHex): UnlockChunk[] =>
  (
    someOf<{ value: Codec; thawAt: Codec }[]>(
      context.storage.get(context.state, 'Capacity', 'UnstakeUnlocks', staker),
    ) ?? []
  ).map((chunk) => ({ value: bigintOf(chunk.value), thawAt: numberOf(chunk.thawAt) }));

const writeUnlocks = (context: Context, staker: AccountHex, chunks: UnlockChunk[]) =>
  context.storage.set(context.state, 'Capacity', 'UnstakeUnlocks', [staker], chunks.length > 0 ? chunks : undefined);

const unlocking = (chunks: UnlockChunk[]) => chunks.reduce((sum, chunk) => sum + chunk.value, 0n);

type Context = DispatchContext | BlockHookContext;

const signed = (context: DispatchContext): AccountHex => {
  if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
  return context.origin.who;
};

/** The tokens staked by an account (frozen in its balance). */
const stakedBy = (context: Context, staker: AccountHex): bigint => {
  const details = someOf<{ active: Codec }>(
    context.storage.get(context.state, 'Capacity', 'StakingAccountLedger', staker),
  );
  return details ? bigintOf(details.active) : 0n;
};

/**
 * Stakes tokens for a provider: freezes them and issues Capacity (2 % of the amount) to the target's ledger.
 * Used by the stake call and by the genesis, which stakes for Alice's provider MSA.
 */
export function stake(
  context: Context,
  staker: AccountHex,
  target: number,
  amount: bigint,
  constants: CapacityConstants,
): bigint {
  if (amount === 0n) throw new ModuleError('Capacity', 'ZeroAmountNotAllowed');
  if (!isProvider(context, target)) throw new ModuleError('Capacity', 'InvalidTarget');
  const account = readAccount(context, staker);
  const alreadyStaked = stakedBy(context, staker);
  const thawing = unlocking(readUnlocks(context, staker));
  const stakable = account.data.free - alreadyStaked - thawing - constants.minimumTokenBalance;
  if (amount > stakable) throw new ModuleError('Capacity', 'BalanceTooLowtoStake');
  if (amount < constants.minimumStakingAmount) throw new ModuleError('Capacity', 'StakingAmountBelowMinimum');
  const capacity = (amount * constants.capacityPerTokenPerBillion) / 1_000_000_000n;
  account.data.frozen = alreadyStaked + thawing + amount;
  writeAccount(context, staker, account);
  context.storage.set(context.state, 'Capacity', 'StakingAccountLedger', [staker], {
    active: alreadyStaked + amount,
    stakingType: 'MaximumCapacity',
  });
  const staking = someOf<{ amount: Codec; capacity: Codec }>(
    context.storage.get(context.state, 'Capacity', 'StakingTargetLedger', staker, target),
  );
  context.storage.set(context.state, 'Capacity', 'StakingTargetLedger', [staker, target], {
    amount: (staking ? bigintOf(staking.amount) : 0n) + amount,
    capacity: (staking ? bigintOf(staking.capacity) : 0n) + capacity,
  });
  const ledger = readLedger(context, target) ?? {
    remainingCapacity: 0n,
    totalTokensStaked: 0n,
    totalCapacityIssued: 0n,
    lastReplenishedEpoch: 0,
  };
  writeLedger(context, target, {
    remainingCapacity: ledger.remainingCapacity + capacity,
    totalTokensStaked: ledger.totalTokensStaked + amount,
    totalCapacityIssued: ledger.totalCapacityIssued + capacity,
    lastReplenishedEpoch: ledger.lastReplenishedEpoch,
  });
  context.deposit('Capacity', 'Staked', { account: staker, target, amount, capacity });
  return capacity;
}

/**
 * Unstakes tokens from a target: they start thawing (frozen until `unstakingThawPeriod` epochs pass) and the
 * target loses the matching share of its Capacity (all of it when the whole stake, or all but a remainder
 * below the minimum, is taken back).
 */
function unstake(
  context: DispatchContext,
  staker: AccountHex,
  target: number,
  requested: bigint,
  constants: CapacityConstants,
) {
  if (requested === 0n) throw new ModuleError('Capacity', 'UnstakedAmountIsZero');
  const active = stakedBy(context, staker);
  if (active === 0n) throw new ModuleError('Capacity', 'NotAStakingAccount');
  const staking = someOf<{ amount: Codec; capacity: Codec }>(
    context.storage.get(context.state, 'Capacity', 'StakingTargetLedger', staker, target),
  );
  if (!staking) throw new ModuleError('Capacity', 'StakerTargetRelationshipNotFound');
  const targetAmount = bigintOf(staking.amount);
  if (requested > targetAmount) throw new ModuleError('Capacity', 'InsufficientStakingBalance');
  const amount = targetAmount - requested < constants.minimumStakingAmount ? targetAmount : requested;
  const chunks = readUnlocks(context, staker);
  if (chunks.length >= constants.maxUnlockingChunks) throw new ModuleError('Capacity', 'MaxUnlockingChunksExceeded');
  chunks.push({ value: amount, thawAt: currentEpoch(context) + constants.unstakingThawPeriod });
  writeUnlocks(context, staker, chunks);

  const ledger = readLedger(context, target);
  if (!ledger) throw new ModuleError('Capacity', 'TargetCapacityNotFound');
  const full = amount === ledger.totalTokensStaked;
  const reduction = full
    ? ledger.totalCapacityIssued
    : (amount * ledger.totalCapacityIssued + ledger.totalTokensStaked - 1n) / ledger.totalTokensStaked;
  writeLedger(context, target, {
    remainingCapacity: ledger.remainingCapacity > reduction ? ledger.remainingCapacity - reduction : 0n,
    totalTokensStaked: ledger.totalTokensStaked - amount,
    totalCapacityIssued: ledger.totalCapacityIssued - reduction,
    lastReplenishedEpoch: ledger.lastReplenishedEpoch,
  });
  const targetCapacity = bigintOf(staking.capacity);
  context.storage.set(
    context.state,
    'Capacity',
    'StakingTargetLedger',
    [staker, target],
    amount === targetAmount
      ? undefined
      : { amount: targetAmount - amount, capacity: targetCapacity > reduction ? targetCapacity - reduction : 0n },
  );
  context.storage.set(
    context.state,
    'Capacity',
    'StakingAccountLedger',
    [staker],
    active === amount ? undefined : { active: active - amount, stakingType: 'MaximumCapacity' },
  );
  context.deposit('Capacity', 'UnStaked', { account: staker, target, amount, capacity: reduction });
}

/** Releases every thawed unlock chunk: the tokens are no longer frozen. */
function withdrawUnstaked(context: DispatchContext, staker: AccountHex) {
  const chunks = readUnlocks(context, staker);
  if (chunks.length === 0) throw new ModuleError('Capacity', 'NoUnstakedTokensAvailable');
  const epoch = currentEpoch(context);
  const thawed = chunks.filter((chunk) => chunk.thawAt <= epoch);
  if (thawed.length === 0) throw new ModuleError('Capacity', 'NoThawedTokenAvailable');
  const remaining = chunks.filter((chunk) => chunk.thawAt > epoch);
  writeUnlocks(context, staker, remaining);
  const account = readAccount(context, staker);
  account.data.frozen = stakedBy(context, staker) + unlocking(remaining);
  writeAccount(context, staker, account);
  context.deposit('Capacity', 'StakeWithdrawn', { account: staker, amount: unlocking(thawed) });
}

export function capacityPallet(constants: CapacityConstants): PalletRuntime {
  return {
    name: 'Capacity',
    calls: {
      stake: (context, args) =>
        void stake(context, signed(context), msaIdOf(args.target as Codec), bigintOf(args.amount as Codec), constants),
      unstake: (context, args) =>
        unstake(
          context,
          signed(context),
          msaIdOf(args.target as Codec),
          bigintOf(args.requestedAmount as Codec),
          constants,
        ),
      withdrawUnstaked: (context) => withdrawUnstaked(context, signed(context)),
      setEpochLength: (context, args) => {
        if (context.origin.type !== 'root') throw new DispatchFailure('BadOrigin');
        const length = numberOf(args.length as Codec);
        if (length > constants.maxEpochLength) throw new ModuleError('Capacity', 'MaxEpochLengthExceeded');
        context.storage.set(context.state, 'Capacity', 'EpochLength', [], length);
        context.deposit('Capacity', 'EpochLengthUpdated', { blocks: length });
      },
    },
    // An epoch lasts EpochLength blocks; the next one opens in the block that reaches it.
    onInitialize: (context) => {
      const { storage, state } = context;
      const start = numberOf(
        (storage.get(state, 'Capacity', 'CurrentEpochInfo') as unknown as { epochStart: Codec }).epochStart,
      );
      const length = numberOf(storage.get(state, 'Capacity', 'EpochLength'));
      if (context.blockNumber - start >= length) {
        storage.set(state, 'Capacity', 'CurrentEpoch', [], currentEpoch(context) + 1);
        storage.set(state, 'Capacity', 'CurrentEpochInfo', [], { epochStart: context.blockNumber });
      }
    },
  };
}
