import type { Codec } from '@polkadot/types/types';
import type { DispatchContext } from '../../runtime/context.js';
import { someOf } from '../../runtime/codecs.js';
import type { Reader as StateReader } from './accounts.js';

type Reader = StateReader & { blockNumber: number };
import { ModuleError } from '../../runtime/errors.js';

/** A payload must expire strictly after the executing block and before the end of the window. */
export function checkPayloadWindow(
  pallet: string,
  current: number,
  expiration: number,
  window: number,
  order: 'notYetValidFirst' | 'expiredFirst',
): void {
  const notYetValid = expiration >= current + window;
  const expired = expiration <= current;
  const checks: Array<[boolean, string]> = [
    [notYetValid, 'ProofNotYetValid'],
    [expired, 'ProofHasExpired'],
  ];
  if (order === 'expiredFirst') checks.reverse();
  for (const [failed, error] of checks) if (failed) throw new ModuleError(pallet, error);
}

/**
 * Whether a signature could be registered now (check_signature_against_registry): inside its window and not
 * already in the registry. What a transaction extension asks before dispatch.
 */
export function signatureUsable(reader: Reader, signature: Codec, expiration: number, window: number): boolean {
  const current = reader.blockNumber;
  if (expiration >= current + window || expiration <= current) return false;
  if (reader.storage.has(reader.state, 'Msa', 'PayloadSignatureRegistryList', signature)) return false;
  const pointer = someOf<Pointer>(reader.storage.get(reader.state, 'Msa', 'PayloadSignatureRegistryPointer'));
  return pointer === undefined || pointer.newest.toHex() !== signature.toHex();
}

interface Pointer {
  newest: Codec;
  newestExpiresAt: { toNumber(): number };
  oldest: Codec;
  count: { toNumber(): number };
}

/**
 * Replay protection for MSA payload signatures: every accepted signature is remembered until its payload
 * expires, in a list ordered oldest to newest (each entry points at the next newer one; the newest lives in
 * the pointer). A full registry recycles its oldest entry once that entry has expired.
 */
export function registerSignature(
  context: DispatchContext,
  signature: Codec,
  expiration: number,
  window: number,
  capacity: number,
): void {
  checkPayloadWindow('Msa', context.blockNumber, expiration, window, 'notYetValidFirst');
  const { storage, state } = context;
  const key = signature.toHex();
  const option = storage.get(state, 'Msa', 'PayloadSignatureRegistryPointer') as unknown as {
    isSome: boolean;
    unwrap(): Pointer;
  };
  if (!option.isSome) {
    storage.set(state, 'Msa', 'PayloadSignatureRegistryPointer', [], {
      newest: signature,
      newestExpiresAt: expiration,
      oldest: signature,
      count: 1,
    });
    return;
  }
  const pointer = option.unwrap();
  if (pointer.newest.toHex() === key || storage.has(state, 'Msa', 'PayloadSignatureRegistryList', signature)) {
    throw new ModuleError('Msa', 'SignatureAlreadySubmitted');
  }
  let oldest = pointer.oldest;
  let count = pointer.count.toNumber();
  if (count >= capacity) {
    const entry = storage.get(state, 'Msa', 'PayloadSignatureRegistryList', oldest) as unknown as {
      isSome: boolean;
      unwrap(): [{ toNumber(): number }, Codec];
    };
    if (!entry.isSome) throw new ModuleError('Msa', 'SignatureRegistryCorrupted');
    const [oldestExpiry, next] = entry.unwrap();
    if (oldestExpiry.toNumber() > context.blockNumber) throw new ModuleError('Msa', 'SignatureRegistryLimitExceeded');
    storage.set(state, 'Msa', 'PayloadSignatureRegistryList', [oldest], undefined);
    oldest = next;
    count -= 1;
  }
  // The previous newest joins the list, pointing at the new one.
  storage.set(
    state,
    'Msa',
    'PayloadSignatureRegistryList',
    [pointer.newest],
    [pointer.newestExpiresAt.toNumber(), signature],
  );
  storage.set(state, 'Msa', 'PayloadSignatureRegistryPointer', [], {
    newest: signature,
    newestExpiresAt: expiration,
    oldest,
    count: count + 1,
  });
}
