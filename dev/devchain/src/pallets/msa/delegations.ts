import { hexToU8a, u8aToHex } from '@polkadot/util';
import type { Codec } from '@polkadot/types/types';
import { numberOf, someOf } from '../../runtime/codecs.js';
import type { BlockHookContext, DispatchContext } from '../../runtime/context.js';
import { ModuleError } from '../../runtime/errors.js';
import type { Reader } from './accounts.js';

export interface Delegation {
  revokedAt: number;
  permissions: Map<number, number>;
}

export function readDelegation(reader: Reader, delegator: number, provider: number): Delegation | undefined {
  const value = someOf<{ revokedAt: Codec; permissions: Map<Codec, Codec> }>(
    reader.storage.get(reader.state, 'Msa', 'DelegatorAndProviderToDelegation', delegator, provider),
  );
  if (!value) return undefined;
  const permissions = new Map<number, number>();
  for (const [intent, revokedAt] of value.permissions) permissions.set(numberOf(intent), numberOf(revokedAt));
  return { revokedAt: numberOf(value.revokedAt), permissions };
}

function writeDelegation(context: BlockHookContext, delegator: number, provider: number, delegation: Delegation): void {
  const permissions = new Map([...delegation.permissions].sort(([a], [b]) => a - b));
  context.storage.set(context.state, 'Msa', 'DelegatorAndProviderToDelegation', [delegator, provider], {
    revokedAt: delegation.revokedAt,
    permissions,
  });
}

/** Valid at block `at`: not revoked, or revoked at a block not yet reached. */
export const isActive = (delegation: Delegation | undefined, at: number): delegation is Delegation =>
  delegation !== undefined && (delegation.revokedAt === 0 || delegation.revokedAt >= at);

/** Every intent id must be at most the highest intent id registered. */
function checkIntents(context: BlockHookContext, intentIds: number[], maxGrants: number): void {
  if (intentIds.length > maxGrants) throw new ModuleError('Msa', 'ExceedsMaxGrantsPerDelegation');
  const maximum = numberOf(context.storage.get(context.state, 'Schemas', 'CurrentIntentIdentifierMaximum'));
  if (intentIds.some((id) => id > maximum)) throw new ModuleError('Msa', 'InvalidIntentId');
}

/** A first delegation from `delegator` to `provider`. */
export function addDelegation(
  context: BlockHookContext,
  delegator: number,
  provider: number,
  intentIds: number[],
  maxGrants: number,
): void {
  if (readDelegation(context, delegator, provider)) throw new ModuleError('Msa', 'DuplicateProvider');
  checkIntents(context, intentIds, maxGrants);
  writeDelegation(context, delegator, provider, { revokedAt: 0, permissions: new Map(intentIds.map((id) => [id, 0])) });
}

/**
 * grant_delegation's upsert: the delegation and the listed intents become active; intents granted before
 * but not listed now are revoked at the current block.
 */
export function upsertDelegation(
  context: DispatchContext,
  delegator: number,
  provider: number,
  intentIds: number[],
  maxGrants: number,
): void {
  checkIntents(context, intentIds, maxGrants);
  const existing = readDelegation(context, delegator, provider);
  const permissions = new Map<number, number>();
  for (const [intent, revokedAt] of existing?.permissions ?? []) {
    permissions.set(intent, intentIds.includes(intent) ? 0 : revokedAt === 0 ? context.blockNumber : revokedAt);
  }
  for (const id of intentIds) permissions.set(id, 0);
  writeDelegation(context, delegator, provider, { revokedAt: 0, permissions });
}

export function revokeDelegation(context: DispatchContext, delegator: number, provider: number): void {
  const delegation = readDelegation(context, delegator, provider);
  if (!delegation) throw new ModuleError('Msa', 'DelegationNotFound');
  if (delegation.revokedAt !== 0) throw new ModuleError('Msa', 'DelegationRevoked');
  writeDelegation(context, delegator, provider, { ...delegation, revokedAt: context.blockNumber });
  context.deposit('Msa', 'DelegationRevoked', { providerId: provider, delegatorId: delegator });
}

/** Whether `delegator` has any delegation still active at block `at`. */
export function hasActiveDelegations(reader: Reader, delegator: number, at: number): boolean {
  const values = reader.storage.values<Codec>(reader.state, 'Msa', 'DelegatorAndProviderToDelegation', delegator);
  return values.some((value) => {
    const revokedAt = numberOf((value as unknown as { revokedAt: Codec }).revokedAt);
    return revokedAt === 0 || revokedAt >= at;
  });
}

/** Whether `provider` may act for `delegator` on `intentId` at block `at` (delegation and grant both valid). */
export function isGranted(reader: Reader, delegator: number, provider: number, intentId: number, at: number): boolean {
  const delegation = readDelegation(reader, delegator, provider);
  if (!isActive(delegation, at)) return false;
  const revokedAt = delegation.permissions.get(intentId);
  return revokedAt !== undefined && (revokedAt === 0 || revokedAt >= at);
}

/** The effective revocation of a grant: the earlier non-zero of the delegation's and the grant's. */
const effectiveRevocation = (delegation: number, grant: number) =>
  delegation === 0 ? grant : grant === 0 ? delegation : Math.min(delegation, grant);

/** DelegationResponse of the runtime APIs, or undefined when there is no delegation or it grants nothing. */
export function delegationResponse(reader: Reader, delegator: number, provider: number) {
  const delegation = readDelegation(reader, delegator, provider);
  if (!delegation || delegation.permissions.size === 0) return undefined;
  return {
    providerId: provider,
    permissions: [...delegation.permissions].map(([grantedId, revokedAt]) => ({
      grantedId,
      revokedAt: effectiveRevocation(delegation.revokedAt, revokedAt),
      explicitRevokedAt: revokedAt,
    })),
    revokedAt: delegation.revokedAt,
  };
}

/** Every provider `delegator` has delegated to (DelegationResponse each, ascending by provider). */
export function delegationsOf(reader: Reader, delegator: number) {
  const prefix = hexToU8a(reader.storage.prefix('Msa', 'DelegatorAndProviderToDelegation', delegator));
  const providers = reader.state
    .keys(u8aToHex(prefix))
    .map((key) => reader.storage.registry.createType('u64', hexToU8a(key).slice(-8)).toNumber())
    .sort((a, b) => a - b);
  return providers.flatMap((provider) => delegationResponse(reader, delegator, provider) ?? []);
}
