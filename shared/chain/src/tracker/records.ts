import type { Registry } from 'prom-client';
import type { Logger, RedisClient, ReplicatedWrites, TraceCarrier } from '@frequency-gateway/platform';
import type { ChainTiming } from '../timing.js';
import type { RuntimeVersions } from '../runtimeVersions.js';
import type { ChainError } from '../transactionErrors.js';

export interface ChainEvent {
  section: string;
  method: string;
  data: unknown;
}

/** How a recorded transaction ended, with every job that rode in it. */
export type TransactionOutcome = {
  txHash: `0x${string}`;
  jobs: string[];
} & (
  | { status: 'succeeded'; blockNumber: number; blockHash: string; events: ChainEvent[] }
  | { status: 'failed'; blockNumber: number; blockHash: string; events: ChainEvent[]; error: ChainError }
  /**
   * Never to be included: its era ended at `blockNumber`, or (`runtimeUpgrade`) the runtime it was signed for
   * ended there (the blocks after it run a newer one, under which its signature no longer holds).
   */
  | { status: 'expired'; blockNumber: number; runtimeUpgrade?: { signedFor: number; chainRuns: number } }
);

/** Why an expired transaction was never included, as requests and logs say it. */
export function expiryReason(outcome: TransactionOutcome & { status: 'expired' }): string {
  const upgrade = outcome.runtimeUpgrade;
  return upgrade
    ? `the transaction was signed for runtime spec ${upgrade.signedFor}, and the chain upgraded to spec ${upgrade.chainRuns} at block ${outcome.blockNumber} before including it`
    : 'the transaction expired before it was included';
}

/** An outcome before its jobs are attached (each variant without `jobs`). */
export type Settled = TransactionOutcome extends infer T ? (T extends unknown ? Omit<T, 'jobs'> : never) : never;

export interface TrackerOptions {
  /** Redis key prefix (CACHE_KEY_PREFIX). */
  prefix: string;
  /** Scan best blocks instead of finalized ones (TRUST_UNFINALIZED_BLOCKS). Default false. */
  trustUnfinalized?: boolean;
  /** Receives each outcome; when it throws, the outcome is offered again on the next scan. */
  onOutcome: (outcome: TransactionOutcome) => Promise<void>;
  /** Where the pending transactions are exported (chain_transactions_pending, chain_transaction_oldest_pending_blocks). */
  metrics?: Registry;
  /** The newest finalized block number (the connection's `heads().finalized`), to age pending transactions by. */
  finalizedHead?: () => number;
  /**
   * Acknowledged = durable (REDIS_DURABILITY=replicated): a record is confirmed on a replica before `record`
   * resolves, so that a transaction is never submitted with a record a failover could lose (nobody would settle
   * it, and its job, tried again, would submit its messages twice).
   */
  replicatedWrites?: Pick<ReplicatedWrites, 'mark' | 'confirm'>;
  /**
   * The timing contract (default ChainTiming.DEFAULT). Its `recordWithinMs` is how long `record` may take: it
   * resolves, and its caller submits, only within this time of its start; later it throws, and the submission is
   * left to the scan (with `replicatedWrites`, the record is written and confirmed again until then). Its
   * `resubmitAfterMs` is when the scan submits again a recorded transaction that is in no block yet (and again
   * every as long): its submitter died, or lost Redis, between recording and submitting.
   */
  timing?: ChainTiming;
  /** How long a settled transaction's record cannot be written again (1 hour): longer than any late write. */
  settledRetentionSeconds?: number;
  /** Where resubmissions are logged. */
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/** A recorded transaction without an outcome yet, as kept in the pending hash (JSON, by hash). */
export interface PendingRecord {
  birth: number;
  death: number;
  nonce: number;
  /**
   * The signed extrinsic (hex), for the scan to submit again once nobody holds the transaction (its submitter
   * died, or lost Redis, between recording and submitting). Absent in records written before it was kept.
   */
  signed?: string;
  /** Its signer's address (absent with `signed` in older records). */
  signer?: string;
  /** The runtime its signature is for (absent in older records). */
  signedFor?: RuntimeVersions;
  /** When the transaction was first recorded (ms); with tracing on, the start of its finalization span. */
  recordedAt?: number;
  /** With tracing on: the span that submitted it. */
  trace?: TraceCarrier;
}

/** Where the tracker keeps its records in Redis, under the service's prefix. */
export class TrackerKeys {
  /** Every pending record, by transaction hash. */
  readonly pending: string;
  /** The last block scanned. */
  readonly scanned: string;
  /**
   * With TRUST_UNFINALIZED_BLOCKS: the hash of each block scanned that was not yet known final, by number, so that
   * a reorganisation of what was scanned is seen.
   */
  readonly scannedHashes: string;
  /**
   * With TRUST_UNFINALIZED_BLOCKS: each record settled from a block not yet known final, with its jobs and the
   * block, by hash: opened again should that block be retracted.
   */
  readonly provisional: string;

  constructor(private readonly prefix: string) {
    this.pending = `${prefix}:tx:pending`;
    this.scanned = `${prefix}:tx:scanned`;
    this.scannedHashes = `${prefix}:tx:scanned-hashes`;
    this.provisional = `${prefix}:tx:provisional`;
  }

  /** The jobs riding in a transaction (a set). */
  jobs(hash: string): string {
    return `${this.prefix}:tx:jobs:${hash}`;
  }

  /** The marker of a settled transaction, refusing a late record of it. */
  settled(hash: string): string {
    return `${this.prefix}:tx:settled:${hash}`;
  }
}

/** The pending records, by hash. */
export async function readPending(redis: RedisClient, keys: TrackerKeys): Promise<Map<string, PendingRecord>> {
  const entries = await redis.hgetall(keys.pending);
  return new Map(Object.entries(entries).map(([hash, json]) => [hash, JSON.parse(json) as PendingRecord]));
}
