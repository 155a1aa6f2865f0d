import type { TypeRegistry } from '@polkadot/types';
/** A pallet error, as the runtime reports it: `DispatchError::Module { index, error }`. */
export class ModuleError extends Error {
  constructor(
    readonly pallet: string,
    readonly error: string,
  ) {
    super(`${pallet}.${error}`);
    this.name = 'ModuleError';
  }
}

/** A dispatch error that is not a pallet error (BadOrigin, Other, Token, Arithmetic…). */
export class DispatchFailure extends Error {
  constructor(readonly dispatchError: Record<string, unknown> | string) {
    super(typeof dispatchError === 'string' ? dispatchError : JSON.stringify(dispatchError));
    this.name = 'DispatchFailure';
  }
}

export const badOrigin = () => new DispatchFailure('BadOrigin');

/**
 * Why the transaction pool refuses an extrinsic, with the JSON-RPC error a Substrate node answers
 * (code 1010 "Invalid Transaction" and the `data` text of `InvalidTransaction`/`UnknownTransaction`).
 */
export class TransactionRejected extends Error {
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly data: string,
  ) {
    super(`${rpcMessage}: ${data}`);
    this.name = 'TransactionRejected';
  }
}

export const invalidTransaction = (data: string) => new TransactionRejected(1010, 'Invalid Transaction', data);

/** UnknownTransaction: the node reports code 1011 with the variant's Debug name as data. */
export const UNKNOWN = {
  cannotLookup: () => new TransactionRejected(1011, 'Unknown Transaction Validity', 'CannotLookup'),
};

export const INVALID = {
  stale: () => invalidTransaction('Transaction is outdated'),
  badProof: () => invalidTransaction('Transaction has a bad signature'),
  ancientBirthBlock: () => invalidTransaction('Transaction has an ancient birth block'),
  payment: () => invalidTransaction('Inability to pay some fees (e.g. account balance too low)'),
  call: () => invalidTransaction('Transaction call is not expected'),
  custom: (code: number) => invalidTransaction(`Custom error: ${code}`),
  alreadyImported: () => new TransactionRejected(1013, 'Transaction Already Imported', 'Transaction Already Imported'),
  tooLowPriority: (old: number, fresh: number) =>
    new TransactionRejected(1014, 'Priority is too low', `Priority is too low: (${old} vs ${fresh})`),
};

/** The index of a pallet's error in the runtime metadata (what `Custom(n)` codes derived from errors carry). */
export function moduleErrorIndex(registry: TypeRegistry, pallet: string, error: string): number {
  const entry = registry.metadata.pallets.find((p) => p.name.toString() === pallet);
  const variants = entry?.errors.isSome
    ? registry.lookup.getSiType(entry.errors.unwrap().type).def.asVariant.variants
    : [];
  const variant = variants.find((v) => v.name.toString() === error);
  if (!variant) throw new Error(`pallet ${pallet} has no error ${error}`);
  return variant.index.toNumber();
}
