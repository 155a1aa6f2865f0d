import { ChainQueries, type Intent, type OpeningChain, type Schema } from '@frequency-gateway/chain';

/**
 * Schemas and intents as the service needs them, read from the chain through one connection. A schema never
 * changes once registered, so it is cached for good; an intent gains schemas over time, so its entry (and
 * with it "the latest schema of dsnp.broadcast") is refreshed after `intentTtlMs`.
 */
export class SchemaDirectory {
  private readonly schemas = new Map<number, Promise<Schema | undefined>>();
  private readonly intents = new Map<string, { at: number; intent: Promise<Intent | undefined> }>();

  constructor(
    private readonly chain: OpeningChain,
    private readonly options: { readyTimeoutMs: number; intentTtlMs: number },
  ) {}

  async queries(): Promise<ChainQueries> {
    const connection = await this.chain.ready(this.options.readyTimeoutMs);
    return new ChainQueries(connection.api);
  }

  async schema(schemaId: number): Promise<Schema | undefined> {
    let found = this.schemas.get(schemaId);
    if (!found) {
      found = this.queries().then((queries) => queries.schema(schemaId));
      this.schemas.set(schemaId, found);
    }
    try {
      const schema = await found;
      // Absence is not cached: the schema may be registered a moment later.
      if (!schema) this.schemas.delete(schemaId);
      return schema;
    } catch (error) {
      this.schemas.delete(schemaId);
      throw error;
    }
  }

  async intentByName(name: string): Promise<Intent | undefined> {
    const key = name.toLowerCase();
    const cached = this.intents.get(key);
    if (cached && Date.now() - cached.at < this.options.intentTtlMs) return cached.intent;
    const intent = this.queries().then((queries) => queries.intentByName(name));
    this.intents.set(key, { at: Date.now(), intent });
    try {
      const found = await intent;
      if (!found) this.intents.delete(key);
      return found;
    } catch (error) {
      this.intents.delete(key);
      throw error;
    }
  }

  /** Largest message payload the chain stores on chain, in bytes. */
  async maxOnChainPayloadBytes(): Promise<number> {
    return (await this.queries()).maxMessagePayloadBytes();
  }
}
