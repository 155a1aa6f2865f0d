import type { OpeningChain } from './connection.js';
import type { ChainQueries, Intent, Schema } from './queries.js';

/**
 * Schemas and intents as the service needs them, read from the chain through one connection. A schema never
 * changes once registered, so it is cached for good; an intent gains schemas over time, so its entry (and
 * with it "the latest schema of dsnp.broadcast") is refreshed after `intentTtlMs`.
 */
export class SchemaDirectory {
  private readonly cache = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(
    private readonly chain: OpeningChain,
    private readonly options: { readyTimeoutMs: number; intentTtlMs: number },
  ) {}

  async queries(): Promise<ChainQueries> {
    return (await this.chain.ready(this.options.readyTimeoutMs)).queries;
  }

  /** One read per key at a time, kept for `ttlMs`; absence and failures are not kept (they may change soon). */
  private async cached<T>(key: string, ttlMs: number, read: (queries: ChainQueries) => Promise<T | undefined>) {
    const entry = this.cache.get(key);
    if (entry && Date.now() - entry.at < ttlMs) return entry.value as Promise<T | undefined>;
    const value = this.queries().then(read);
    this.cache.set(key, { at: Date.now(), value });
    try {
      const found = await value;
      if (found === undefined) this.cache.delete(key);
      return found;
    } catch (error) {
      this.cache.delete(key);
      throw error;
    }
  }

  schema(schemaId: number): Promise<Schema | undefined> {
    return this.cached(`schema:${schemaId}`, Number.POSITIVE_INFINITY, (queries) => queries.schema(schemaId));
  }

  intentByName(name: string): Promise<Intent | undefined> {
    return this.cached(`intent:${name.toLowerCase()}`, this.options.intentTtlMs, (queries) =>
      queries.intentByName(name),
    );
  }

  /** Largest message payload the chain stores on chain, in bytes. */
  async maxOnChainPayloadBytes(): Promise<number> {
    return (await this.queries()).maxMessagePayloadBytes();
  }
}
