import type { RedisClient } from '@frequency-gateway/platform';
import { z } from 'zod';
import { strictObject } from './strictObject.js';

const intentId = z.coerce.number().int().min(1).max(65535);
const msaId = z
  .union([z.string(), z.number()])
  .transform((value) => String(value))
  .pipe(z.string().regex(/^[1-9][0-9]{0,19}$/, 'must be an MSA id'));

const unique = <T>(items: T[]) => new Set(items).size === items.length;

export const watchOptions = strictObject({
  intentIds: z
    .array(intentId)
    .min(1)
    .refine(unique, 'must not repeat an id')
    .optional()
    .meta({ description: 'Intents to watch (unset: the DSNP announcement intents)', example: [17, 18] }),
  dsnpIds: z
    .array(msaId)
    .min(1)
    .refine(unique, 'must not repeat an id')
    .optional()
    .meta({ description: 'Only announcements from these users (MSA ids; unset: everyone)', example: ['10074'] }),
}).meta({ id: 'ChainWatchOptionsDto' });

export type WatchOptions = z.infer<typeof watchOptions>;

export const resetRequest = strictObject({
  blockNumber: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional()
    .meta({ description: 'Scan again from this block (unset: the finalized head)' }),
  rewindOffset: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional()
    .meta({ description: 'Blocks to go back from blockNumber (or the finalized head)' }),
  immediate: z.boolean().optional().meta({ description: 'Accepted for compatibility: scanning resumes at once' }),
}).meta({ id: 'ResetScannerDto' });

export type ResetRequest = z.infer<typeof resetRequest>;

/**
 * The scanner's state in Redis, shared by every replica: where it stands, whether it is paused, a pending reset,
 * and the watch options. The api writes requests here; the worker that holds the scanner lease acts on them.
 */
export class ScannerControl {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(name: string): string {
    return `${this.prefix}:scanner:${name}`;
  }

  /** The last block scanned, if the scanner has started. */
  async position(): Promise<number | undefined> {
    const value = await this.redis.get(this.key('position'));
    return value === null ? undefined : Number(value);
  }

  async setPosition(block: number): Promise<void> {
    await this.redis.set(this.key('position'), String(block));
  }

  async paused(): Promise<boolean> {
    return (await this.redis.exists(this.key('paused'))) === 1;
  }

  async pause(): Promise<void> {
    await this.redis.set(this.key('paused'), new Date().toISOString());
  }

  async start(): Promise<void> {
    await this.redis.del(this.key('paused'));
  }

  /** Asks the scanner to go back (and resume if paused); it acts on it before its next range. */
  async requestReset(request: ResetRequest): Promise<void> {
    const { blockNumber, rewindOffset } = request;
    await this.redis
      .multi()
      .set(this.key('reset'), JSON.stringify({ blockNumber, rewindOffset }))
      .del(this.key('paused'))
      .exec();
  }

  /** The pending reset, taken (a reset is acted on once). */
  async takeReset(): Promise<ResetRequest | undefined> {
    const value = await this.redis.getdel(this.key('reset'));
    return value === null ? undefined : (JSON.parse(value) as ResetRequest);
  }

  async options(): Promise<WatchOptions | undefined> {
    const value = await this.redis.get(this.key('options'));
    return value === null ? undefined : (JSON.parse(value) as WatchOptions);
  }

  /** Replaces the watch options. */
  async setOptions(options: WatchOptions): Promise<void> {
    await this.redis.set(this.key('options'), JSON.stringify(options));
  }
}
