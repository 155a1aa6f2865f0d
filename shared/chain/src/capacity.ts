import type { ApiPromise } from '@polkadot/api';
import type { RedisClient } from '@frequency-gateway/platform';
import { Gauge, type Registry } from 'prom-client';
import type { TransactionOutcome } from './tracker/index.js';

export interface CapacityLimit {
  type: 'percentage' | 'amount';
  value: bigint;
}

export interface CapacityLimits {
  /** What this service may spend per epoch. */
  service: CapacityLimit;
  /** What the provider as a whole may have spent per epoch (every service together). */
  total?: CapacityLimit;
}

export class CapacityLimitError extends Error {
  constructor(message: string) {
    super(`CAPACITY_LIMIT ${message}`);
    this.name = 'CapacityLimitError';
  }
}

function parseLimit(value: unknown, path: string): CapacityLimit {
  const limit = value as { type?: unknown; value?: unknown } | null;
  if (!limit || typeof limit !== 'object') throw new CapacityLimitError(`${path} must be {"type", "value"}`);
  if (limit.type !== 'percentage' && limit.type !== 'amount')
    throw new CapacityLimitError(`${path}.type must be "percentage" or "amount"`);
  let amount: bigint;
  try {
    amount = BigInt(limit.value as string | number);
  } catch {
    throw new CapacityLimitError(`${path}.value must be a whole number`);
  }
  if (amount <= 0n) throw new CapacityLimitError(`${path}.value must be positive`);
  if (limit.type === 'percentage' && amount > 100n) throw new CapacityLimitError(`${path}.value must be at most 100`);
  return { type: limit.type, value: amount };
}

/**
 * Reads CAPACITY_LIMIT as the reference gateway does: one limit `{"type": "percentage"|"amount", "value": …}`
 * (the service limit), or `{"serviceLimit": {…}, "totalLimit": {…}}`.
 */
export function parseCapacityLimit(text: string): CapacityLimits {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CapacityLimitError('is not JSON');
  }
  const record = parsed as Record<string, unknown>;
  if (record && typeof record === 'object' && 'serviceLimit' in record) {
    return {
      service: parseLimit(record.serviceLimit, 'serviceLimit'),
      ...(record.totalLimit === undefined ? {} : { total: parseLimit(record.totalLimit, 'totalLimit') }),
    };
  }
  return { service: parseLimit(parsed, '(limit)') };
}

/** Something the monitor pauses while Capacity is short (a BullMQ queue fits). */
export interface Pausable {
  pause(): Promise<void>;
  resume(): Promise<void>;
}

export interface CapacityState {
  epoch: number;
  remaining: bigint;
  totalIssued: bigint;
  usedByService: bigint;
  available: boolean;
  reason?: string;
}

export interface CapacityMonitorOptions {
  api: ApiPromise;
  redis: RedisClient;
  providerId: bigint | number;
  limits: CapacityLimits;
  /** Redis key prefix (CACHE_KEY_PREFIX) and this service's name, for its per-epoch usage. */
  prefix: string;
  service: string;
  /** Paused while Capacity is short, resumed when it is back. */
  pausable: Pausable[];
  metrics?: Registry;
}

const budget = (limit: CapacityLimit, issued: bigint) =>
  limit.type === 'amount' ? limit.value : (issued * limit.value) / 100n;

/**
 * Keeps the provider's Capacity spending within CAPACITY_LIMIT: tracks what this service spent in the current
 * epoch (from the CapacityWithdrawn events of its transactions), pauses its queues when the service or total
 * limit is reached or Capacity runs out, and checks again at every epoch change and whenever the provider's
 * ledger changes (Staked / UnStaked change what is issued), resuming the queues when Capacity is available.
 */
export class CapacityMonitor {
  private state: CapacityState | undefined;
  private paused = false;
  private stop: (() => void) | undefined;
  private readonly gauges: { remaining?: Gauge; issued?: Gauge; used?: Gauge; paused?: Gauge } = {};

  constructor(private readonly options: CapacityMonitorOptions) {
    const registry = options.metrics;
    if (registry) {
      // A registry holds one gauge per name: a monitor built again (a pipeline start retried) reuses them.
      const gauge = (name: string, help: string) =>
        (registry.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help, registers: [registry] });
      this.gauges.remaining = gauge('gateway_capacity_remaining', "The provider's remaining Capacity this epoch");
      this.gauges.issued = gauge(
        'gateway_capacity_total_issued',
        "The provider's Capacity issued per epoch (from its stake): what `remaining` counts down from",
      );
      this.gauges.used = gauge('gateway_capacity_used_by_service', 'Capacity this service spent in the current epoch');
      this.gauges.paused = gauge(
        'gateway_capacity_paused',
        '1 while the service pauses its queues for lack of Capacity',
      );
    }
  }

  private usageKey(epoch: number): string {
    return `${this.options.prefix}:capacity:used:${this.options.service}:${epoch}`;
  }

  private async epoch(): Promise<number> {
    return (await this.options.api.query.capacity.currentEpoch()).toNumber();
  }

  /** Adds what a settled transaction withdrew from the provider's Capacity to this epoch's usage. */
  async recordOutcome(outcome: TransactionOutcome): Promise<void> {
    if (outcome.status === 'expired') return;
    let spent = 0n;
    for (const event of outcome.events) {
      if (event.section !== 'capacity' || event.method !== 'CapacityWithdrawn') continue;
      const [msaId, amount] = event.data as [number | string, number | string];
      if (BigInt(msaId) === BigInt(this.options.providerId)) spent += BigInt(amount);
    }
    if (spent === 0n) return;
    const key = this.usageKey(await this.epoch());
    await this.options.redis
      .multi()
      .incrby(key, spent.toString())
      .expire(key, 7 * 24 * 3600)
      .exec();
  }

  /** Computes the state and pauses or resumes the queues to match. */
  async check(): Promise<CapacityState> {
    const { api, providerId, limits } = this.options;
    const [epoch, ledger] = await Promise.all([this.epoch(), api.query.capacity.capacityLedger(providerId)]);
    const used = BigInt((await this.options.redis.get(this.usageKey(epoch))) ?? '0');
    let state: CapacityState;
    if (ledger.isNone) {
      state = {
        epoch,
        remaining: 0n,
        totalIssued: 0n,
        usedByService: used,
        available: false,
        reason: 'no Capacity staked',
      };
    } else {
      const value = ledger.unwrap();
      const issued = value.totalCapacityIssued.toBigInt();
      // Capacity refills lazily: in a new epoch the whole issued amount is available again.
      const remaining = value.lastReplenishedEpoch.toNumber() < epoch ? issued : value.remainingCapacity.toBigInt();
      let reason: string | undefined;
      if (remaining <= 0n) reason = 'Capacity exhausted';
      else if (used >= budget(limits.service, issued)) reason = 'service limit reached';
      else if (limits.total && issued - remaining >= budget(limits.total, issued)) reason = 'total limit reached';
      state = {
        epoch,
        remaining,
        totalIssued: issued,
        usedByService: used,
        available: reason === undefined,
        ...(reason ? { reason } : {}),
      };
    }
    await this.apply(state);
    return state;
  }

  private async apply(state: CapacityState): Promise<void> {
    this.state = state;
    this.gauges.remaining?.set(Number(state.remaining));
    this.gauges.issued?.set(Number(state.totalIssued));
    this.gauges.used?.set(Number(state.usedByService));
    // The decision shows at once (with the state in /healthz), and a check running meanwhile does not repeat it;
    // pausing waits for the jobs under way, and a pause or resume that fails is tried again at the next check.
    const pause = !state.available;
    if (pause !== this.paused) {
      this.paused = pause;
      this.gauges.paused?.set(pause ? 1 : 0);
      try {
        await Promise.all(this.options.pausable.map((queue) => (pause ? queue.pause() : queue.resume())));
      } catch (error) {
        this.paused = !pause;
        this.gauges.paused?.set(this.paused ? 1 : 0);
        throw error;
      }
    }
  }

  current(): CapacityState | undefined {
    return this.state;
  }

  /**
   * Checks now, then whenever the epoch changes or the provider's ledger does (a stake or unstake changes the
   * Capacity issued; each withdrawal changes what remains).
   */
  async start(): Promise<void> {
    const { api, providerId } = this.options;
    await this.check();
    const unsubscribe = await api.queryMulti(
      [api.query.capacity.currentEpoch, [api.query.capacity.capacityLedger, providerId]],
      () => void this.check().catch(() => undefined),
    );
    this.stop = unsubscribe;
  }

  close(): void {
    this.stop?.();
  }
}
