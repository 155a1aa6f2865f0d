import { waitUntil } from './processes.js';

/** Runs `task` on every item, `limit` at a time; resolves with the results in order. */
export async function eachLimited<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * Waits until every request is `finalized` or `failed`, reading each one not settled yet with `read` (the
 * services' GET /v1/requests/{referenceId}), 16 at a time; resolves with the records in the order of the ids. On
 * timeout it says how many are left and in which states they stand (`1454 of 2000 left: submitted 1454`).
 */
export async function untilSettled<R extends { state: string }>(
  referenceIds: string[],
  read: (referenceId: string) => Promise<R | undefined>,
  timeoutMs: number,
): Promise<R[]> {
  const done = new Map<string, R>();
  const standing = new Map<string, string>();
  await waitUntil(
    async () => {
      const pending = referenceIds.filter((id) => !done.has(id));
      await eachLimited(pending, 16, async (id) => {
        const record = await read(id);
        if (record && (record.state === 'finalized' || record.state === 'failed')) {
          done.set(id, record);
          standing.delete(id);
        } else standing.set(id, record?.state ?? 'unknown');
      });
      return done.size === referenceIds.length;
    },
    timeoutMs,
    () => {
      const states = new Map<string, number>();
      for (const state of standing.values()) states.set(state, (states.get(state) ?? 0) + 1);
      const counts = [...states].map(([state, count]) => `${state} ${count}`).join(', ');
      return `every request settled (${referenceIds.length - done.size} of ${referenceIds.length} left: ${counts})`;
    },
  );
  return referenceIds.map((id) => done.get(id)!);
}
