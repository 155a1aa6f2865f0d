import { hexOf, type SchemaDirectory } from '@frequency-gateway/chain';
import avro from 'avsc';

/** Values as JSON can carry them: bytes as hex, big integers as decimal strings. */
function jsonSafe(value: unknown): unknown {
  if (value instanceof Uint8Array) return hexOf(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonSafe(item)]));
  return value;
}

/** Reads on-chain payloads with their schema's Avro model (one parsed type per schema, kept: schemas never change). */
export class OnChainDecoder {
  private readonly types = new Map<number, Promise<avro.Type | undefined>>();

  constructor(private readonly directory: SchemaDirectory) {}

  /** The payload as a JSON value, or undefined when the schema has no Avro model or the bytes do not fit it. */
  async decode(schemaId: number, payload: `0x${string}`): Promise<unknown> {
    let type = this.types.get(schemaId);
    if (!type) {
      type = this.typeOf(schemaId);
      this.types.set(schemaId, type);
    }
    const reader = await type;
    if (!reader) return undefined;
    try {
      return jsonSafe(reader.fromBuffer(Buffer.from(payload.slice(2), 'hex')));
    } catch {
      return undefined;
    }
  }

  private async typeOf(schemaId: number): Promise<avro.Type | undefined> {
    const schema = await this.directory.schema(schemaId);
    if (!schema || schema.modelType !== 'AvroBinary') return undefined;
    try {
      return avro.Type.forSchema(JSON.parse(new TextDecoder().decode(schema.model)) as avro.Schema);
    } catch {
      return undefined;
    }
  }
}
