import type { Codec } from '@polkadot/types/types';
import type { StateView } from '../state/state.js';
import type { Storage } from '../state/storage.js';
import { DispatchFailure } from '../runtime/errors.js';
import { accountOfAddress, bigintOf } from '../runtime/codecs.js';
import type { AccountHex, BlockHookContext, DispatchContext, PalletRuntime } from '../runtime/context.js';

type Context = DispatchContext | BlockHookContext;

/** Enough to read and write accounts. */
export interface AccountAccess {
  state: StateView;
  storage: Storage;
}

export interface AccountData {
  nonce: number;
  consumers: number;
  providers: number;
  sufficients: number;
  data: { free: bigint; reserved: bigint; frozen: bigint; flags: bigint };
}

const FLAGS_NEW_LOGIC = 1n << 127n;

export function readAccount(context: AccountAccess, who: AccountHex): AccountData {
  const info = context.storage.get(context.state, 'System', 'Account', who) as unknown as {
    nonce: { toNumber(): number };
    consumers: { toNumber(): number };
    providers: { toNumber(): number };
    sufficients: { toNumber(): number };
    data: {
      free: { toBigInt(): bigint };
      reserved: { toBigInt(): bigint };
      frozen: { toBigInt(): bigint };
      flags: { toBigInt(): bigint };
    };
  };
  return {
    nonce: info.nonce.toNumber(),
    consumers: info.consumers.toNumber(),
    providers: info.providers.toNumber(),
    sufficients: info.sufficients.toNumber(),
    data: {
      free: info.data.free.toBigInt(),
      reserved: info.data.reserved.toBigInt(),
      frozen: info.data.frozen.toBigInt(),
      flags: info.data.flags.toBigInt(),
    },
  };
}

export function writeAccount(context: AccountAccess, who: AccountHex, account: AccountData): void {
  const empty =
    account.providers === 0 && account.sufficients === 0 && account.data.free === 0n && account.data.reserved === 0n;
  context.storage.set(context.state, 'System', 'Account', [who], empty && account.nonce === 0 ? undefined : account);
}

/** The balance that can move without killing the account or touching frozen or reserved funds. */
export function spendable(account: AccountData, ed: bigint, keepAlive: boolean): bigint {
  const locked = account.data.frozen > (keepAlive ? ed : 0n) ? account.data.frozen : keepAlive ? ed : 0n;
  return account.data.free > locked ? account.data.free - locked : 0n;
}

/** Adds funds, creating (endowing) the account when it had none. */
export function credit(context: Context, who: AccountHex, amount: bigint, ed: bigint): void {
  const account = readAccount(context, who);
  const isNew = account.providers === 0 && account.data.free === 0n;
  if (isNew && amount < ed) throw new DispatchFailure({ Token: 'BelowMinimum' });
  account.data.free += amount;
  if (isNew) {
    account.providers = 1;
    account.data.flags = FLAGS_NEW_LOGIC;
    context.deposit('System', 'NewAccount', { account: who });
    context.deposit('Balances', 'Endowed', { account: who, freeBalance: amount });
  }
  writeAccount(context, who, account);
}

/** Removes funds; below the existential deposit the account is reaped (unless keepAlive forbids it). */
export function debit(context: Context, who: AccountHex, amount: bigint, ed: bigint, keepAlive: boolean): void {
  const account = readAccount(context, who);
  if (amount > spendable(account, ed, false)) throw new DispatchFailure({ Token: 'FundsUnavailable' });
  const remaining = account.data.free - amount;
  if (remaining < ed && remaining + account.data.reserved < ed) {
    if (keepAlive) throw new DispatchFailure({ Token: 'NotExpendable' });
    account.data.free = 0n;
    account.providers = 0;
    writeAccount(context, who, account);
    context.deposit('System', 'KilledAccount', { account: who });
    if (remaining > 0n) context.deposit('Balances', 'DustLost', { account: who, amount: remaining });
    return;
  }
  account.data.free = remaining;
  writeAccount(context, who, account);
}

export function transfer(
  context: Context,
  from: AccountHex,
  to: AccountHex,
  amount: bigint,
  ed: bigint,
  keepAlive: boolean,
): void {
  if (amount === 0n || from === to) {
    context.deposit('Balances', 'Transfer', { from, to, amount });
    return;
  }
  debit(context, from, amount, ed, keepAlive);
  credit(context, to, amount, ed);
  context.deposit('Balances', 'Transfer', { from, to, amount });
}

const signer = (context: DispatchContext): AccountHex => {
  if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
  return context.origin.who;
};

const destination = (value: Codec): AccountHex => {
  const account = accountOfAddress(value);
  if (!account) throw new DispatchFailure({ Token: 'UnknownAsset' });
  return account;
};

const amountOf = bigintOf;

export function balancesPallet(ed: bigint): PalletRuntime {
  return {
    name: 'Balances',
    calls: {
      transferAllowDeath: (context, args) =>
        transfer(context, signer(context), destination(args.dest as Codec), amountOf(args.value as Codec), ed, false),
      transferKeepAlive: (context, args) =>
        transfer(context, signer(context), destination(args.dest as Codec), amountOf(args.value as Codec), ed, true),
      // Everything that can move: with keepAlive the existential deposit stays, without it the account is reaped.
      transferAll: (context, args) => {
        const from = signer(context);
        const keepAlive = (args.keepAlive as unknown as { isTrue: boolean }).isTrue;
        const amount = spendable(readAccount(context, from), ed, keepAlive);
        transfer(context, from, destination(args.dest as Codec), amount, ed, keepAlive);
      },
      forceTransfer: (context, args) => {
        if (context.origin.type !== 'root') throw new DispatchFailure('BadOrigin');
        const from = destination(args.source as Codec);
        transfer(context, from, destination(args.dest as Codec), amountOf(args.value as Codec), ed, false);
      },
    },
  };
}
