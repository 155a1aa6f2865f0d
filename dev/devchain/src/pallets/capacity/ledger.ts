import type { Codec } from '@polkadot/types/types';
import { bigintOf, numberOf, someOf } from '../../runtime/codecs.js';
import type { BlockHookContext } from '../../runtime/context.js';
import type { Reader } from '../msa/accounts.js';

export interface CapacityDetails {
  remainingCapacity: bigint;
  totalTokensStaked: bigint;
  totalCapacityIssued: bigint;
  lastReplenishedEpoch: number;
}

type Writer = Pick<BlockHookContext, 'state' | 'storage'>;

export const currentEpoch = (reader: Reader) => numberOf(reader.storage.get(reader.state, 'Capacity', 'CurrentEpoch'));

export function readLedger(reader: Reader, msaId: number): CapacityDetails | undefined {
  const value = someOf<Record<string, Codec>>(reader.storage.get(reader.state, 'Capacity', 'CapacityLedger', msaId));
  if (!value) return undefined;
  return {
    remainingCapacity: bigintOf(value.remainingCapacity as Codec),
    totalTokensStaked: bigintOf(value.totalTokensStaked as Codec),
    totalCapacityIssued: bigintOf(value.totalCapacityIssued as Codec),
    lastReplenishedEpoch: numberOf(value.lastReplenishedEpoch as Codec),
  };
}

export function writeLedger(writer: Writer, msaId: number, ledger: CapacityDetails): void {
  writer.storage.set(writer.state, 'Capacity', 'CapacityLedger', [msaId], ledger);
}

/** Capacity refills lazily: in a new epoch the whole issued amount is available again. */
export function availableCapacity(reader: Reader, ledger: CapacityDetails): bigint {
  return ledger.lastReplenishedEpoch < currentEpoch(reader) ? ledger.totalCapacityIssued : ledger.remainingCapacity;
}

/** Charges a capacity fee (replenishing first when a new epoch began); false when there is not enough. */
export function withdrawCapacity(writer: Writer, msaId: number, amount: bigint): boolean {
  const ledger = readLedger(writer, msaId);
  if (!ledger || availableCapacity(writer, ledger) < amount) return false;
  const epoch = currentEpoch(writer);
  if (ledger.lastReplenishedEpoch < epoch) {
    ledger.remainingCapacity = ledger.totalCapacityIssued;
    ledger.lastReplenishedEpoch = epoch;
  }
  ledger.remainingCapacity -= amount;
  writeLedger(writer, msaId, ledger);
  return true;
}
