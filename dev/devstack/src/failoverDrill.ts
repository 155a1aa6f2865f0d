import { waitUntil } from './processes.js';
import type { LocalRedisSentinelGroup } from './redisSentinel.js';

// What the Redis failover tests of the services share: requests posted at a steady rate with something done at a
// given one (the kill), the readiness of every component polled through the run, and the wait for all of them
// to be ready again. Each service's test brings its own requests and its own checks of what they became.

/**
 * Calls `send(index)` for index 0 … count-1, the n-th at `n / ratePerSecond` seconds from the start, without
 * waiting for one answer before the next is sent. `before(index)`, when given, is awaited before each send (the
 * kill of a primary at a chosen index). Resolves with every answer, in index order, once all have come.
 */
export async function atSteadyRate<T>(
  count: number,
  ratePerSecond: number,
  send: (index: number) => Promise<T>,
  before?: (index: number) => Promise<void>,
): Promise<T[]> {
  const start = Date.now();
  const sends: Promise<T>[] = [];
  for (let index = 0; index < count; index++) {
    const next = start + (index * 1000) / ratePerSecond;
    if (next > Date.now()) await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
    await before?.(index);
    sends.push(send(index));
  }
  return Promise.all(sends);
}

export interface ReadinessPoll {
  at: number;
  /** Each component's answer, in the order they were given; 0 for none. */
  statuses: number[];
  /** The worst of them: 200 only when every component answered 200; 0 when one did not answer. */
  status: number;
}

/** What the polls after an instant (the kill) show. */
export interface ReadinessFigures {
  /** Polls after the instant in which some component was not ready (503, or no answer). */
  notReadyPolls: number;
  /** Of those, the polls in which some component answered 503: it knew it was not ready. */
  unavailablePolls: number;
  polls: number;
  /** From the instant to the first poll not ready. */
  firstNotReadyMs: number | undefined;
  /** From the instant to the first poll with every component ready after the last one not ready. */
  backReadyMs: number | undefined;
}

export interface ReadinessWatch {
  polls: ReadinessPoll[];
  /** Ends the polling (afterAll calls it too, when a test failed half-way). */
  stop(): Promise<void>;
  figuresSince(at: number): ReadinessFigures;
}

/**
 * How one component's readiness is read: the status of its /readyz, 0 when it did not answer. A component on this
 * machine is read at its URL; one in a cluster through whatever reaches it (the API server's pod proxy).
 */
export type ReadinessProbe = () => Promise<number>;

/**
 * GET {url}/readyz: its status, 0 when no answer came within 5 s (a probe's timeout; on a loaded machine an answer
 * may take seconds, and what the component says is what counts).
 */
const readyzAt =
  (url: string): ReadinessProbe =>
  () =>
    fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
      (response) => response.status,
      () => 0,
    );

/** Polls the readiness of every component (its URL, or a probe) every `everyMs` until stopped. */
export function watchReadiness(components: (string | ReadinessProbe)[], everyMs = 100): ReadinessWatch {
  const probes = components.map((component) => (typeof component === 'string' ? readyzAt(component) : component));
  const polls: ReadinessPoll[] = [];
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const statuses = await Promise.all(probes.map((probe) => probe()));
      // A component that did not answer (0) counts as the worst.
      polls.push({ at: Date.now(), statuses, status: statuses.includes(0) ? 0 : Math.max(...statuses) });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    polls,
    stop: async () => {
      watching = false;
      await loop;
    },
    figuresSince: (at) => {
      const notReady = polls.filter((poll) => poll.status !== 200 && poll.at >= at);
      const backReady = polls.find((poll) => poll.status === 200 && poll.at > (notReady.at(-1)?.at ?? at));
      return {
        notReadyPolls: notReady.length,
        unavailablePolls: notReady.filter((poll) => poll.statuses.includes(503)).length,
        polls: polls.length,
        firstNotReadyMs: notReady.length ? (notReady[0] as ReadinessPoll).at - at : undefined,
        backReadyMs: backReady ? backReady.at - at : undefined,
      };
    },
  };
}

/** Waits until GET {url}/readyz answers 200 for every url; on timeout, names those that did not and why. */
export async function waitAllReady(urls: string[], timeoutMs: number): Promise<void> {
  let notReady: string[] = [];
  await waitUntil(
    async () => {
      const answers = await Promise.all(
        urls.map(async (url) => {
          const response = await fetch(`${url}/readyz`);
          return response.status === 200 ? '' : `${url}: ${await response.text()}`;
        }),
      );
      notReady = answers.filter(Boolean);
      return notReady.length === 0;
    },
    timeoutMs,
    () => `every component ready again; not ready: ${notReady.join(' | ')}`,
  );
}

export interface PrimaryKilledUnderLoad<T> {
  /** The answers of the requests, in the order they were sent. */
  answers: T[];
  /** When the primary was killed. */
  killedAt: number;
  /**
   * The primary's port before the kill, the ports of every primary killed and when each was killed (ms after the
   * first kill), and the one the Sentinels named last.
   */
  primary: { before: number; killed: number[]; killedAfterMs: number[]; after: number };
  /** The readiness polls of the whole run, stopped once every component was ready again. */
  readiness: ReadinessWatch;
}

/**
 * The Redis failover drill: `count` requests sent at `ratePerSecond` (`send(index)`), the Sentinel group's
 * primary killed with -9 before the `killAfter`-th, the readiness of every component polled through the run.
 * With `primaryKills` above 1, each replica the Sentinels promote is killed too, as soon as they name it, while the
 * requests go on, until that many primaries were killed (the group needs a replica left after the last).
 * Resolves once every answer came, the Sentinels named a primary still alive and every component is ready again.
 */
export async function killPrimaryUnderLoad<T>(options: {
  group: LocalRedisSentinelGroup;
  componentUrls: string[];
  count: number;
  ratePerSecond: number;
  killAfter: number;
  primaryKills?: number;
  send: (index: number) => Promise<T>;
}): Promise<PrimaryKilledUnderLoad<T>> {
  const { group } = options;
  const killed: number[] = [];
  const killedAt: number[] = [];
  const kill = async (port: number) => {
    const primary = group.servers.find((server) => server.port === port);
    if (!primary) throw new Error(`no server of the group listens on the primary's port ${port}`);
    killed.push(port);
    killedAt.push(Date.now());
    await primary.kill('SIGKILL');
  };
  /** The primary the Sentinels name once they no longer name a killed one. */
  const promoted = () =>
    waitUntil(
      async () => {
        const port = await group.primaryPort();
        return !killed.includes(port) && port;
      },
      90_000,
      `the Sentinels to name a primary other than ${killed.join(', ')}`,
    );
  const readiness = watchReadiness(options.componentUrls);
  try {
    const before = await group.primaryPort();
    let promotedKilled: Promise<void> = Promise.resolve();
    const answers = await atSteadyRate(options.count, options.ratePerSecond, options.send, async (index) => {
      if (index !== options.killAfter) return;
      await kill(before);
      // The later kills go on beside the requests, each as soon as the Sentinels named the next primary.
      promotedKilled = (async () => {
        while (killed.length < (options.primaryKills ?? 1)) await kill(await promoted());
      })();
      // Awaited once the requests are sent; a failure meanwhile is not an unhandled rejection.
      promotedKilled.catch(() => undefined);
    });
    await promotedKilled;
    const after = await promoted();
    await waitAllReady(options.componentUrls, 90_000);
    // The watch's own polls too (one started before the components were back may still end in a 503).
    await waitUntil(
      async () => readiness.polls.at(-1)?.status === 200,
      30_000,
      'a readiness poll with every component ready',
    );
    const first = killedAt[0] ?? 0;
    const killedAfterMs = killedAt.map((at) => at - first);
    return { answers, killedAt: first, primary: { before, killed, killedAfterMs, after }, readiness };
  } finally {
    await readiness.stop();
  }
}
