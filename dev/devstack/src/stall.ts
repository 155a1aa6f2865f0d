import { waitUntil, type ServerProcess } from './processes.js';

/** What a stall reads of a job queue: a BullMQ `Queue` (structurally). */
export interface StalledQueue {
  getJobs(types: 'active'[]): Promise<({ id?: string } | undefined)[]>;
  getJobState(jobId: string): Promise<string>;
  close(): Promise<void>;
}

/** The queue's events: a BullMQ `QueueEvents` (structurally), listened to for 'stalled'. */
export interface StalledQueueEvents {
  on(event: 'stalled', listener: (args: { jobId: string }) => void): unknown;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}

type QueueOptions = { connection: { url: string }; prefix: string };

/** The BullMQ module (`import * as bullmq from 'bullmq'`): the workbench opens the queue with the caller's BullMQ. */
export interface StalledQueueModule {
  Queue: new (name: string, options: QueueOptions) => StalledQueue;
  QueueEvents: new (name: string, options: QueueOptions) => StalledQueueEvents;
}

/** The queue whose jobs the frozen worker holds: its name, its Redis and its key prefix (`{prefix}:bull`). */
export interface StalledQueueAddress {
  bullmq: StalledQueueModule;
  name: string;
  redisUrl: string;
  prefix: string;
}

/** How a worker was stalled: the jobs it held when frozen, found stalled and finished by another worker. */
export interface Stall {
  held: string[];
  /** How long it stayed frozen. */
  frozenMs: number;
  /** Freezes tried: one that caught the worker holding no job of the queue was resumed at once and tried again. */
  attempts: number;
}

export interface StallOptions {
  /**
   * Starts the worker that takes the frozen one's jobs over, called once, right after the first freeze that caught
   * jobs active. With it the frozen worker is the only one until then, so the jobs active at that freeze are the
   * ones it holds: no race with another worker that could run every job first.
   */
  takeOver?: () => Promise<unknown>;
}

/**
 * Stalls `worker` the way a long GC pause or a frozen container does: freezes it (SIGSTOP) at a moment it holds
 * active jobs of `queue`, keeps it frozen until BullMQ has found those jobs stalled (their lock lapsed) and another
 * worker has run them to their end, then resumes it (SIGCONT), its runs of those jobs now stale.
 *
 * Which worker holds a job BullMQ does not say; a frozen worker's jobs stay active until found stalled, another
 * worker's end. So a freeze that catches it holding none shows as every job active at the freeze ending without a
 * stall: it is resumed and tried again once the queue has active jobs. The worker is resumed whatever happens.
 */
export async function stallWorker(
  worker: ServerProcess,
  address: StalledQueueAddress,
  timeoutMs = 120_000,
  stallOptions: StallOptions = {},
): Promise<Stall> {
  const options = { connection: { url: address.redisUrl }, prefix: address.prefix };
  const queue = new address.bullmq.Queue(address.name, options);
  const events = new address.bullmq.QueueEvents(address.name, options);
  try {
    await events.waitUntilReady();
    return await stallHolding(worker, queue, events, timeoutMs, stallOptions);
  } finally {
    await events.close();
    await queue.close();
  }
}

async function stallHolding(
  worker: ServerProcess,
  queue: StalledQueue,
  events: StalledQueueEvents,
  timeoutMs: number,
  options: StallOptions,
): Promise<Stall> {
  const stalled = new Set<string>();
  events.on('stalled', ({ jobId }) => stalled.add(jobId));
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(deadline - Date.now(), 1);
  const activeIds = async () => (await queue.getJobs(['active'])).flatMap((job) => (job?.id ? [job.id] : []));
  const ended = async (jobId: string) => ['completed', 'failed'].includes(await queue.getJobState(jobId));
  let tookOver = false;
  for (let attempts = 1; ; attempts++) {
    await waitUntil(async () => (await activeIds()).length > 0, left(), 'active jobs to freeze the worker on', 20);
    worker.freeze();
    const frozenAt = Date.now();
    // Only what stalls from now on is this freeze's doing (a loaded worker may have lost a lock of its own before).
    stalled.clear();
    try {
      // Read before any other worker starts: while the frozen one is the only worker, these are the jobs it holds.
      // None: it ended them between the look and the freeze (a loaded machine); it is resumed and frozen again.
      const active = await activeIds();
      if (active.length === 0) continue;
      if (!tookOver) {
        tookOver = true;
        await options.takeOver?.();
      }
      const outcome = await waitUntil(
        async () => {
          const held = active.filter((jobId) => stalled.has(jobId));
          if (held.length > 0) return held;
          for (const jobId of active) if ((await queue.getJobState(jobId)) === 'active') return false;
          return 'held none';
        },
        left(),
        'the frozen worker’s jobs found stalled',
        250,
      );
      if (outcome === 'held none') continue;
      // Another worker took them over: they end while this one is still frozen.
      await waitUntil(
        async () => (await Promise.all(outcome.map(ended))).every(Boolean),
        left(),
        'another worker to end the jobs the frozen one held',
        250,
      );
      return { held: outcome, frozenMs: Date.now() - frozenAt, attempts };
    } finally {
      worker.resume();
    }
  }
}

/**
 * The figures of a stall test, from the stall and the workers' log lines: how many runs learnt that a later run
 * of their job took it over (the fence turned them away), and how many BullMQ refused to complete because their
 * lock was gone.
 */
export function stallFigures(stall: Stall | undefined, workerLogs: string[]) {
  return {
    held: stall?.held.length,
    frozenSeconds: (stall?.frozenMs ?? 0) / 1000,
    freezeAttempts: stall?.attempts,
    staleRuns: workerLogs.filter((line) => line.includes('a later run of this job took it over')).length,
    lostLocks: workerLogs.filter((line) => line.includes('Missing lock')).length,
  };
}

/**
 * Webhook bodies by the `referenceId` they name, in order of arrival; a delivery that repeats a `webhook-id` already
 * received is the same notification sent again (at least once: its sender was frozen or killed after the POST and
 * before it recorded the 200, and another worker sent it again) and is left out. Those are `repeated`.
 */
export function notificationsByReference(
  received: { body: unknown; headers?: Record<string, string> }[],
): Map<string, Record<string, unknown>[]> & { repeated: number } {
  const byReference = Object.assign(new Map<string, Record<string, unknown>[]>(), { repeated: 0 });
  const seen = new Set<string>();
  for (const { body, headers } of received) {
    const id = headers?.['webhook-id'];
    if (id !== undefined && seen.has(id)) {
      byReference.repeated++;
      continue;
    }
    if (id !== undefined) seen.add(id);
    const notification = body as Record<string, unknown>;
    const referenceId = String(notification.referenceId);
    byReference.set(referenceId, [...(byReference.get(referenceId) ?? []), notification]);
  }
  return byReference;
}
