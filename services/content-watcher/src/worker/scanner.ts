import type { ChainConnection, ChainQueries, SchemaDirectory } from '@frequency-gateway/chain';
import type { Logger } from '@frequency-gateway/platform';
import type { Queue } from 'bullmq';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BatchJob } from '../jobs.js';
import type { ScannerControl } from '../scannerControl.js';
import { initialPosition, nextScanRange, positionAfterReset } from './blockRanges.js';
import { queueMessages, watchedIntents } from './messages.js';

export interface ScannerOptions {
  connection: ChainConnection;
  queries: ChainQueries;
  directory: SchemaDirectory;
  control: ScannerControl;
  queue: Queue<BatchJob>;
  /** Where a scanner that never ran starts (unset: the finalized head then). */
  startingBlock?: number;
  /** Most blocks read in one step. */
  maxBlocks: number;
  /** Batch jobs waiting beyond which the scanner waits for the readers to catch up. */
  highWater: number;
  logger: Logger;
  metrics: Registry;
}

/**
 * Follows finalized blocks and queues every message of the watched intents, once: the position (the last block
 * whose messages are queued) lives in Redis and moves only after the range's jobs are stored, and those jobs
 * are keyed by the messages' places, so a scanner that stops anywhere (or a replica that takes over) goes on
 * without gaps or duplicates. Run it under a leader lease: one replica scans at a time.
 */
export class ChainScanner {
  private readonly blocks: Counter;
  private readonly messages: Counter;
  private readonly position: Gauge;
  private wake: (() => void) | undefined;

  constructor(private readonly options: ScannerOptions) {
    const registers = [options.metrics];
    this.blocks = new Counter({ name: 'watcher_blocks_scanned_total', help: 'Blocks scanned', registers });
    this.messages = new Counter({
      name: 'watcher_messages_found_total',
      help: 'Messages found in scanned blocks',
      registers,
    });
    this.position = new Gauge({ name: 'watcher_scanner_block', help: 'The last block scanned', registers });
  }

  /**
   * Scans until `signal` aborts: a step whenever there is something to do, else one block time's wait.
   * `progress` is called on every turn (a step, or a wait, each bounded): a leader's stall watch.
   */
  async scanUntil(signal: AbortSignal, progress: () => void = () => undefined): Promise<void> {
    while (!signal.aborted) {
      progress();
      let progressed = false;
      try {
        progressed = await this.step();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'scan step failed; retrying');
      }
      if (!progressed && !signal.aborted) await this.pause(signal);
    }
  }

  /** Wakes a waiting scanner (a new finalized head). */
  nudge(): void {
    this.wake?.();
  }

  private pause(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.connection.blockTimeMs);
      signal.addEventListener('abort', done);
      this.wake = done;
    });
  }

  /** One range of blocks, if there is one to scan and room in the queue; whether it scanned. */
  async step(): Promise<boolean> {
    const { control, queries, logger } = this.options;
    if (await control.paused()) return false;
    const finalized = (await queries.finalizedBlock()).number;
    let position = await this.resetPosition(finalized);
    if (position === undefined) {
      position = await control.position();
      if (position === undefined) {
        position = initialPosition(this.options.startingBlock, finalized);
        await control.setPosition(position);
        logger.info({ startingBlock: position + 1 }, 'scanner starts');
      }
    }
    const range = nextScanRange(position, finalized, this.options.maxBlocks);
    if (!range) return false;
    if ((await this.options.queue.getWaitingCount()) >= this.options.highWater) return false;

    const intents = await watchedIntents(this.options.directory, (await control.options())?.intentIds);
    const found = await queueMessages(queries, this.options.queue, intents, range);
    await control.setPosition(range.to);
    this.blocks.inc(range.to - position);
    this.messages.inc(found);
    this.position.set(range.to);
    if (found > 0) logger.info({ ...range, messages: found }, 'blocks scanned');
    return true;
  }

  /** A pending reset as the position to scan after, if there is one. */
  private async resetPosition(finalized: number): Promise<number | undefined> {
    const reset = await this.options.control.takeReset();
    if (!reset) return undefined;
    const position = positionAfterReset(reset, finalized);
    await this.options.control.setPosition(position);
    this.options.logger.info({ from: position + 1 }, 'scanner reset');
    return position;
  }
}
