import type { Logger } from '@frequency-gateway/platform';
import { WsProvider } from '@polkadot/api';
import { Counter, type Registry } from 'prom-client';
import { AnswerCache } from './answerCache.js';

type ProviderInterfaceEmitted = Parameters<WsProvider['on']>[0];
type ProviderInterfaceEmitCb = Parameters<WsProvider['on']>[1];
type Subscription = Parameters<WsProvider['send']>[3];

/** Why the connection left a node for the next. */
export type SwitchReason = 'closed' | 'unanswered' | 'silent' | 'other-chain';

export interface NodeSetOptions {
  urls: readonly string[];
  /** Pause before trying again once every node has failed. */
  reconnectMs: number;
  logger?: Logger;
  metrics?: Registry;
}

function switchCounter(registry: Registry): Counter<'reason'> {
  const name = 'chain_node_switches_total';
  return (
    (registry.getSingleMetric(name) as Counter<'reason'> | undefined) ??
    new Counter({
      name,
      help: 'Times a component left its Frequency node for the next one of FREQUENCY_API_WS_URL, by reason',
      labelNames: ['reason'],
      registers: [registry],
    })
  );
}

/**
 * The nodes of FREQUENCY_API_WS_URL behind one WebSocket provider. One node is in use at a time; when its socket
 * closes the next is tried at once, and after a whole round of failures every `reconnectMs`. Of several nodes, one
 * that serves another chain than the first one answered with (another genesis hash) is refused until the process
 * restarts, and reported. The provider's own reconnection is off: this set decides where and when to connect.
 */
export class NodeSet {
  readonly provider: WsProvider;
  private readonly hosts: string[];
  private current = -1;
  private readonly refused = new Set<number>();
  private genesis: string | undefined;
  private closed = false;
  private answered = false;
  private failuresInARow = 0;
  private pendingReason: SwitchReason | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly switches: Counter<'reason'> | undefined;
  private readonly log: Logger | undefined;

  constructor(private readonly options: NodeSetOptions) {
    this.hosts = options.urls.map((url) => new URL(url).host);
    this.log = options.logger;
    this.switches = options.metrics ? switchCounter(options.metrics) : undefined;
    const next = (count: number) => this.next(count);
    // The api hears of a connection only once its node has shown it serves the right chain: until then the
    // provider keeps 'connected' to itself, so that nothing is read from or sent to another chain's node.
    const listeners = new Set<ProviderInterfaceEmitCb>();
    const answers = new AnswerCache();
    class RotatingProvider extends WsProvider {
      override send<T>(
        method: string,
        params: unknown[],
        isCacheable?: boolean,
        subscription?: Subscription,
      ): Promise<T> {
        if (!isCacheable || subscription) return super.send<T>(method, params, false, subscription);
        return answers.get(`${method}::${JSON.stringify(params)}`, () => super.send<T>(method, params, false));
      }
      override selectEndpointIndex(endpoints: string[]): number {
        return next(endpoints.length);
      }
      override on(type: ProviderInterfaceEmitted, sub: ProviderInterfaceEmitCb): () => void {
        if (type !== 'connected') return super.on(type, sub);
        listeners.add(sub);
        return () => listeners.delete(sub);
      }
      onSocketConnected(sub: ProviderInterfaceEmitCb): void {
        super.on('connected', sub);
      }
    }
    const provider = new RotatingProvider([...options.urls], false);
    provider.onSocketConnected(() => void this.onConnected(() => listeners.forEach((sub) => sub())));
    provider.on('disconnected', () => this.onDisconnected());
    this.provider = provider;
    this.connect();
  }

  /** Host (and port) of the node in use or being tried. */
  get target(): string {
    return this.hosts[Math.max(this.current, 0)] as string;
  }

  /** Leaves the node in use for the next one (its socket is closed; the next is tried at once). */
  leave(reason: SwitchReason, detail: string): void {
    if (this.closed || !this.provider.isConnected) return;
    this.log?.warn({ node: this.target, reason }, `leaving the chain node ${this.target}: ${detail}`);
    this.pendingReason = reason;
    void this.provider.disconnect();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  /**
   * Watches the node in use every `everyMs`: one that sends nothing at all (no answer, no notification) within
   * `answerWithinMs` of a request, or whose head moved on while no new head came through the subscription (`best`)
   * for two checks, is left for the next (a single node is connected to again, which subscribes anew). A node that
   * is slow to answer but still sending is busy, not lost, and is kept. Returns the timer, for clearInterval.
   */
  watch(watching: { best: () => number; ready: () => boolean; answerWithinMs: number; everyMs: number }) {
    let silentChecks = 0;
    let bestAtLastCheck = -1;
    let slow = false;
    const check = async () => {
      if (!watching.ready()) return;
      const timeout = AbortSignal.timeout(watching.answerWithinMs);
      const receivedBefore = this.provider.stats.total.bytesRecv;
      let number: number;
      try {
        const header = await Promise.race([
          this.provider.send<{ number: string }>('chain_getHeader', []),
          new Promise<never>((_, reject) => timeout.addEventListener('abort', () => reject(timeout.reason))),
        ]);
        number = Number.parseInt(header.number, 16);
      } catch {
        // One I/O turn first: after this process was too busy to read, what arrived meanwhile is counted.
        await new Promise((resolve) => setImmediate(resolve));
        if (!timeout.aborted || !watching.ready()) return;
        if (this.provider.stats.total.bytesRecv === receivedBefore)
          this.leave('unanswered', `nothing received within ${watching.answerWithinMs} ms of a request`);
        else if (!slow) {
          slow = true;
          this.log?.warn(
            { node: this.target },
            `the chain node ${this.target} has not answered within ${watching.answerWithinMs} ms but is still sending: kept`,
          );
        }
        return;
      }
      slow = false;
      const best = watching.best();
      silentChecks = number > best && best === bestAtLastCheck ? silentChecks + 1 : 0;
      bestAtLastCheck = best;
      if (silentChecks < 2) return;
      silentChecks = 0;
      this.leave('silent', `its head is #${number} but no new head came since #${best}`);
    };
    const timer = setInterval(() => void check(), watching.everyMs);
    timer.unref();
    return timer;
  }

  private next(count: number): number {
    for (let step = 1; step <= count; step++) {
      const index = (this.current + step) % count;
      if (!this.refused.has(index)) return (this.current = index);
    }
    // Every node serves another chain than the first: keep trying the first one's.
    return (this.current = (this.current + 1) % count);
  }

  private connect(): void {
    if (this.closed) return;
    this.provider.connect().catch(() => this.onDisconnected());
  }

  private async onConnected(announce: () => void): Promise<void> {
    const node = this.current;
    let genesis: string;
    try {
      genesis = String(await this.provider.send('chain_getBlockHash', [0]));
    } catch {
      return; // the socket closed again: onDisconnected moves on
    }
    // With a single node there is nothing to mix: a node that comes back with another chain (a development chain
    // started afresh) is used, and the api loads that chain's metadata.
    if (this.options.urls.length === 1) this.genesis = genesis;
    this.genesis ??= genesis;
    if (genesis !== this.genesis && node === this.current) {
      this.refused.add(node);
      this.log?.error(
        { node: this.hosts[node], genesis, expected: this.genesis },
        `the chain node ${this.hosts[node]} serves another chain (genesis ${genesis}, not ${this.genesis}): it is not used`,
      );
      this.pendingReason = 'other-chain';
      void this.provider.disconnect();
      return;
    }
    if (node !== this.current || !this.provider.isConnected) return;
    this.answered = true;
    this.failuresInARow = 0;
    announce();
  }

  private onDisconnected(): void {
    if (this.closed) return;
    const reason = this.pendingReason ?? 'closed';
    this.pendingReason = undefined;
    if (this.answered && this.options.urls.length > 1) this.switches?.inc({ reason });
    this.failuresInARow = this.answered ? 0 : this.failuresInARow + 1;
    this.answered = false;
    // The next node at once, unless a whole round has just failed.
    const wait = this.failuresInARow >= this.options.urls.length ? this.options.reconnectMs : 0;
    if (wait > 0) this.failuresInARow = 0;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.connect(), wait);
    this.retry.unref();
  }
}
