import type { StateView } from '../../state/state.js';
import type { Storage } from '../../state/storage.js';
import { numberOf, someOf } from '../../runtime/codecs.js';
import type { AccountHex, BlockHookContext } from '../../runtime/context.js';
import { ModuleError } from '../../runtime/errors.js';

export interface Reader {
  state: StateView;
  storage: Storage;
}

export const msaOf = (reader: Reader, key: AccountHex): number | undefined => {
  const id = someOf(reader.storage.get(reader.state, 'Msa', 'PublicKeyToMsaId', key));
  return id === undefined ? undefined : numberOf(id);
};

export const requireMsa = (reader: Reader, key: AccountHex): number => {
  const id = msaOf(reader, key);
  if (id === undefined) throw new ModuleError('Msa', 'NoKeyExists');
  return id;
};

export const keyCount = (reader: Reader, msaId: number) =>
  numberOf(reader.storage.get(reader.state, 'Msa', 'PublicKeyCountForMsaId', msaId));

export const isProvider = (reader: Reader, msaId: number) =>
  reader.storage.has(reader.state, 'Msa', 'ProviderToRegistryEntryV2', msaId);

/** Adds a key to an MSA (at most `maxKeys`), the key must not belong to any MSA yet. */
export function addKey(context: BlockHookContext, msaId: number, key: AccountHex, maxKeys: number): void {
  if (msaOf(context, key) !== undefined) throw new ModuleError('Msa', 'KeyAlreadyRegistered');
  const count = keyCount(context, msaId);
  if (count >= maxKeys) throw new ModuleError('Msa', 'KeyLimitExceeded');
  context.storage.set(context.state, 'Msa', 'PublicKeyToMsaId', [key], msaId);
  context.storage.set(context.state, 'Msa', 'PublicKeyCountForMsaId', [msaId], count + 1);
}

export function removeKey(context: BlockHookContext, msaId: number, key: AccountHex): void {
  context.storage.set(context.state, 'Msa', 'PublicKeyToMsaId', [key], undefined);
  const remaining = keyCount(context, msaId) - 1;
  context.storage.set(context.state, 'Msa', 'PublicKeyCountForMsaId', [msaId], remaining > 0 ? remaining : undefined);
}

/** A new MSA id for `key` (ids start at 1 and are never reused). */
export function createMsa(context: BlockHookContext, key: AccountHex, maxKeys: number): number {
  if (msaOf(context, key) !== undefined) throw new ModuleError('Msa', 'KeyAlreadyRegistered');
  const id = numberOf(context.storage.get(context.state, 'Msa', 'CurrentMsaIdentifierMaximum')) + 1;
  context.storage.set(context.state, 'Msa', 'CurrentMsaIdentifierMaximum', [], id);
  addKey(context, id, key, maxKeys);
  context.deposit('Msa', 'MsaCreated', { msaId: id, key });
  return id;
}

export function registerProvider(
  context: BlockHookContext,
  msaId: number,
  entry: unknown,
  nameLength: number,
  maxName: number,
): void {
  if (nameLength > maxName) throw new ModuleError('Msa', 'ExceedsMaxProviderNameSize');
  if (isProvider(context, msaId)) throw new ModuleError('Msa', 'DuplicateProviderRegistryEntry');
  context.storage.set(context.state, 'Msa', 'ProviderToRegistryEntryV2', [msaId], entry);
  context.deposit('Msa', 'ProviderCreated', { providerId: msaId });
}
