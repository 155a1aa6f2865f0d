import {
  dsnpModels,
  genesisOnlyModels,
  genesisSchemaModels,
  loadFacts,
  type IntentFact,
  type SchemaFact,
  type SchemasGenesis,
} from '@frequency-gateway/devchain';

/** Where the runtime's development genesis presets read their intents and schemas from, in a Frequency tree. */
export const GENESIS_SCHEMAS_FILE = 'resources/genesis-schemas.json';

type Ordered<T> = T & { fileOrder: number };

const inFileOrder = <T>(entries: T[]) =>
  [...(entries as Ordered<T>[])].sort((a, b) => a.fileOrder - b.fileOrder) as T[];

/**
 * The schemas pallet's development genesis as the runtime's preset reads it (its JSON field names), written from
 * the facts the devchain's own genesis is built from: both chains start from the same intents, schemas and models.
 * A source tree without its `resources/` (the reference snapshot has none) gets it from here.
 */
export async function genesisSchemasJson(): Promise<string> {
  const genesis = loadFacts().devGenesis.schemas as SchemasGenesis;
  const models = genesisSchemaModels(genesis, { byName: await dsnpModels(), byId: genesisOnlyModels() });
  const intents = inFileOrder<IntentFact>(genesis.intents).map((intent) => ({
    intent_id: intent.intentId,
    payload_location: intent.payloadLocation,
    settings: intent.settings,
    name: intent.name,
  }));
  const schemas = inFileOrder<SchemaFact>(genesis.schemas).map((schema) => ({
    schema_id: schema.schemaId,
    intent_id: schema.intentId,
    model_type: schema.modelType,
    payload_location: schema.payloadLocation,
    status: schema.status,
    model: models.get(schema.schemaId),
  }));
  return `${JSON.stringify({ schemas, intents, intent_groups: [] }, null, 2)}\n`;
}
