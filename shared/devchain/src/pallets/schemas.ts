import { stringToU8a, u8aToHex } from '@polkadot/util';
import type { BlockHookContext, PalletRuntime } from '../runtime/context.js';
import type { RuntimeFacts } from '../runtime/facts.js';

interface IntentFact {
  intentId: number;
  name: string;
  payloadLocation: string;
  settings: string[];
}

interface SchemaFact {
  schemaId: number;
  intentId: number;
  modelType: string;
  payloadLocation: string;
  status: string;
}

interface SchemasGenesis {
  intentIdentifierMaximum: number;
  schemaIdentifierMaximum: number;
  intentGroupIdentifierMaximum: number;
  governanceSchemaModelMaxBytes: number;
  encoding: { settingsBitflags: Record<string, number> };
  intents: IntentFact[];
  schemas: SchemaFact[];
}

/** Names are registered lower-cased, split at the first dot into (namespace, descriptor) bytes. */
export function nameKey(name: string): [string, string] {
  const lower = name.toLowerCase();
  const dot = lower.indexOf('.');
  return [u8aToHex(stringToU8a(lower.slice(0, dot))), u8aToHex(stringToU8a(lower.slice(dot + 1)))];
}

/** The development genesis of intents and schemas (the DSNP ones), in the runtime's build order. */
function writeGenesis(context: BlockHookContext, genesis: SchemasGenesis): void {
  const { storage, state } = context;
  const bits = genesis.encoding.settingsBitflags;
  const settingsOf = (names: string[]) => names.reduce((flags, name) => flags | (bits[name] ?? 0), 0);
  const intentSettings = new Map<number, number>();
  for (const intent of genesis.intents) {
    const settings = settingsOf(intent.settings);
    intentSettings.set(intent.intentId, settings);
    storage.set(state, 'Schemas', 'IntentInfos', [intent.intentId], {
      payloadLocation: intent.payloadLocation,
      settings,
    });
    storage.set(state, 'Schemas', 'NameToMappedEntityIds', nameKey(intent.name), { Intent: intent.intentId });
  }
  for (const schema of genesis.schemas) {
    storage.set(state, 'Schemas', 'SchemaInfos', [schema.schemaId], {
      intentId: schema.intentId,
      modelType: schema.modelType,
      payloadLocation: schema.payloadLocation,
      settings: intentSettings.get(schema.intentId) ?? 0,
      status: schema.status,
    });
  }
  storage.set(state, 'Schemas', 'CurrentIntentIdentifierMaximum', [], genesis.intentIdentifierMaximum);
  storage.set(state, 'Schemas', 'CurrentSchemaIdentifierMaximum', [], genesis.schemaIdentifierMaximum);
  storage.set(state, 'Schemas', 'CurrentIntentGroupIdentifierMaximum', [], genesis.intentGroupIdentifierMaximum);
  storage.set(state, 'Schemas', 'GovernanceSchemaModelMaxBytes', [], genesis.governanceSchemaModelMaxBytes);
}

export function schemasPallet(facts: RuntimeFacts): PalletRuntime {
  const genesis = facts.devGenesis.schemas as SchemasGenesis;
  return { name: 'Schemas', genesis: (context) => writeGenesis(context, genesis) };
}
