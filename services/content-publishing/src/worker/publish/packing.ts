/** What packing needs to know of a parcel: its calls (all or nothing) and whether it must travel alone. */
export interface ParcelShape {
  calls: number;
  solo: boolean;
}

/** Whether what waits fills a transaction, or its newest parcel must travel alone: then it goes at once. */
export function sendsAtOnce(waiting: readonly ParcelShape[], maxCalls: number): boolean {
  const calls = waiting.reduce((sum, parcel) => sum + parcel.calls, 0);
  return calls >= maxCalls || waiting.at(-1)?.solo === true;
}

/**
 * The parcels (their positions in `waiting`, oldest first) that make the next transaction: the oldest parcel,
 * alone when it is solo; otherwise with every later parcel that is not solo and still fits under `maxCalls`,
 * in order (a parcel too big for the room left waits for the next transaction; a smaller one after it may go).
 */
export function nextPack(waiting: readonly ParcelShape[], maxCalls: number): number[] {
  const first = waiting[0];
  if (!first) return [];
  if (first.solo) return [0];
  const pack = [0];
  let calls = first.calls;
  for (const [index, parcel] of waiting.entries()) {
    if (index === 0 || parcel.solo || calls + parcel.calls > maxCalls) continue;
    pack.push(index);
    calls += parcel.calls;
  }
  return pack;
}

/**
 * How a publication's pending messages travel: those that must go alone (a packed transaction failed and the
 * culprit is being found) one per parcel; the others in parcels of up to `maxCalls`, in order.
 */
export function parcelsOf(
  pending: readonly number[],
  solo: ReadonlySet<number>,
  maxCalls: number,
): { messages: number[]; solo: boolean }[] {
  const together = pending.filter((index) => !solo.has(index));
  const parcels: { messages: number[]; solo: boolean }[] = [];
  for (let start = 0; start < together.length; start += maxCalls)
    parcels.push({ messages: together.slice(start, start + maxCalls), solo: false });
  for (const index of pending) if (solo.has(index)) parcels.push({ messages: [index], solo: true });
  return parcels;
}
