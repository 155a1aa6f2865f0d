import type { Codec } from '@polkadot/types/types';
import { stringToU8a, u8aToHex } from '@polkadot/util';
import { numberOf } from '../../runtime/codecs.js';
import type { BlockHookContext, DispatchContext, PalletRuntime } from '../../runtime/context.js';
import { DispatchFailure, ModuleError } from '../../runtime/errors.js';
import type { RuntimeFacts } from '../../metadata/facts.js';
import { SETTING_BITS, intentInfo, nameKey } from './info.js';
import { parseSchemaName } from './names.js';
import { isParquetModel } from './parquetModel.js';

export interface IntentFact {
  intentId: number;
  name: string;
  payloadLocation: string;
  settings: string[];
}

export interface SchemaFact {
  schemaId: number;
  intentId: number;
  modelType: string;
  payloadLocation: string;
  status: string;
}

export interface SchemasGenesis {
  intentIdentifierMaximum: number;
  schemaIdentifierMaximum: number;
  intentGroupIdentifierMaximum: number;
  governanceSchemaModelMaxBytes: number;
  intents: IntentFact[];
  schemas: SchemaFact[];
}

export interface SchemaModels {
  /** Models by intent name (the DSNP ones, from @dsnp/schemas). */
  byName: Map<string, string>;
  /** Models by schema id, for the genesis schemas @dsnp/schemas does not publish. */
  byId: Map<number, string>;
}

export interface SchemasLimits {
  minSchemaModelSizeBytes: number;
  maxSchemaSettingsPerSchema: number;
}

/** The model of each genesis schema: its own by id, else the published one of an intent name it serves. */
export function genesisSchemaModels(genesis: SchemasGenesis, models: SchemaModels): Map<number, string> {
  const intentNames = new Map<number, string[]>();
  for (const intent of genesis.intents)
    intentNames.set(intent.intentId, [...(intentNames.get(intent.intentId) ?? []), intent.name]);
  const chosen = new Map<number, string>();
  for (const schema of genesis.schemas) {
    const model =
      models.byId.get(schema.schemaId) ??
      (intentNames.get(schema.intentId) ?? []).map((name) => models.byName.get(name)).find((m) => m !== undefined);
    if (model === undefined) throw new Error(`no model for genesis schema ${schema.schemaId}`);
    chosen.set(schema.schemaId, model);
  }
  return chosen;
}

const settingsBits = (names: string[]) => names.reduce((flags, name) => flags | (SETTING_BITS[name] ?? 0), 0);

/** The development genesis of intents and schemas, in the runtime's build order (all intents, then schemas). */
function writeGenesis(context: BlockHookContext, genesis: SchemasGenesis, models: SchemaModels): void {
  const { storage, state } = context;
  const intentSettings = new Map<number, number>();
  const schemaModels = genesisSchemaModels(genesis, models);
  for (const intent of genesis.intents) {
    const settings = settingsBits(intent.settings);
    intentSettings.set(intent.intentId, settings);
    storage.set(state, 'Schemas', 'IntentInfos', [intent.intentId], {
      payloadLocation: intent.payloadLocation,
      settings,
    });
    const { namespace, descriptor } = parseSchemaName(stringToU8a(intent.name), true);
    storage.set(state, 'Schemas', 'NameToMappedEntityIds', nameKey(namespace, descriptor as string), {
      Intent: intent.intentId,
    });
  }
  for (const schema of genesis.schemas) {
    const model = schemaModels.get(schema.schemaId) as string;
    storage.set(state, 'Schemas', 'SchemaInfos', [schema.schemaId], {
      intentId: schema.intentId,
      modelType: schema.modelType,
      payloadLocation: schema.payloadLocation,
      settings: intentSettings.get(schema.intentId) ?? 0,
      status: schema.status,
    });
    storage.set(state, 'Schemas', 'SchemaPayloads', [schema.schemaId], u8aToHex(stringToU8a(model)));
  }
  storage.set(state, 'Schemas', 'CurrentIntentIdentifierMaximum', [], genesis.intentIdentifierMaximum);
  storage.set(state, 'Schemas', 'CurrentSchemaIdentifierMaximum', [], genesis.schemaIdentifierMaximum);
  storage.set(state, 'Schemas', 'CurrentIntentGroupIdentifierMaximum', [], genesis.intentGroupIdentifierMaximum);
  storage.set(state, 'Schemas', 'GovernanceSchemaModelMaxBytes', [], genesis.governanceSchemaModelMaxBytes);
}

function checkModel(model: Uint8Array, modelType: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(model));
  } catch {
    throw new ModuleError('Schemas', 'InvalidSchema');
  }
  // Avro models must be a JSON object (the runtime's validate_json_model); Parquet ones a ParquetModel.
  const isAvroObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  if (modelType === 'Parquet' ? !isParquetModel(parsed) : !isAvroObject)
    throw new ModuleError('Schemas', 'InvalidSchema');
}

export function schemasPallet(facts: RuntimeFacts, models: SchemaModels, limits: SchemasLimits): PalletRuntime {
  const genesis = facts.devGenesis.schemas as SchemasGenesis;

  const signer = (context: DispatchContext) => {
    if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
    return context.origin.who;
  };
  const root = (context: DispatchContext) => {
    if (context.origin.type !== 'root') throw new DispatchFailure('BadOrigin');
  };

  const createIntent = (context: DispatchContext, key: string, args: Record<string, Codec>) => {
    const location = (args.payloadLocation as Codec).toString();
    const settings = (args.settings as unknown as Codec[]).map((s) => s.toString());
    if (settings.length > limits.maxSchemaSettingsPerSchema) throw new ModuleError('Schemas', 'InvalidSetting');
    if (settings.includes('AppendOnly') && location !== 'Itemized') throw new ModuleError('Schemas', 'InvalidSetting');
    if (settings.includes('SignatureRequired') && location !== 'Itemized' && location !== 'Paginated')
      throw new ModuleError('Schemas', 'InvalidSetting');
    const { namespace, descriptor } = parseSchemaName((args.intentName as Codec).toU8a(true), true);
    const name = nameKey(namespace, descriptor as string);
    if (context.storage.has(context.state, 'Schemas', 'NameToMappedEntityIds', ...name))
      throw new ModuleError('Schemas', 'NameAlreadyExists');
    const id = numberOf(context.storage.get(context.state, 'Schemas', 'CurrentIntentIdentifierMaximum')) + 1;
    if (id > 0xffff) throw new ModuleError('Schemas', 'IntentCountOverflow');
    context.storage.set(context.state, 'Schemas', 'CurrentIntentIdentifierMaximum', [], id);
    context.storage.set(context.state, 'Schemas', 'NameToMappedEntityIds', name, { Intent: id });
    context.storage.set(context.state, 'Schemas', 'IntentInfos', [id], {
      payloadLocation: location,
      settings: settingsBits(settings),
    });
    context.deposit('Schemas', 'IntentCreated', {
      key,
      intentId: id,
      intentName: u8aToHex(stringToU8a(`${namespace}.${descriptor}`)),
    });
  };

  const createSchema = (context: DispatchContext, key: string, args: Record<string, Codec>) => {
    const model = (args.model as Codec).toU8a(true);
    const modelType = (args.modelType as Codec).toString();
    checkModel(model, modelType);
    if (model.length < limits.minSchemaModelSizeBytes) throw new ModuleError('Schemas', 'LessThanMinSchemaModelBytes');
    const maxBytes = numberOf(context.storage.get(context.state, 'Schemas', 'GovernanceSchemaModelMaxBytes'));
    if (model.length > maxBytes) throw new ModuleError('Schemas', 'ExceedsMaxSchemaModelBytes');
    const intentId = numberOf(args.intentId as Codec);
    const intent = intentInfo(context, intentId);
    if (!intent) throw new ModuleError('Schemas', 'InvalidIntentId');
    const id = numberOf(context.storage.get(context.state, 'Schemas', 'CurrentSchemaIdentifierMaximum')) + 1;
    if (id > 0xffff) throw new ModuleError('Schemas', 'SchemaCountOverflow');
    context.storage.set(context.state, 'Schemas', 'CurrentSchemaIdentifierMaximum', [], id);
    context.storage.set(context.state, 'Schemas', 'SchemaInfos', [id], {
      intentId,
      modelType,
      payloadLocation: intent.payloadLocation,
      settings: intent.settings,
      status: 'Active',
    });
    context.storage.set(context.state, 'Schemas', 'SchemaPayloads', [id], u8aToHex(model));
    context.deposit('Schemas', 'SchemaCreated', { key, schemaId: id });
  };

  /** A new "namespace.descriptor" name, not registered yet: its storage key and its combined form. */
  const newName = (context: DispatchContext, name: Codec) => {
    const { namespace, descriptor } = parseSchemaName(name.toU8a(true), true);
    const key = nameKey(namespace, descriptor as string);
    if (context.storage.has(context.state, 'Schemas', 'NameToMappedEntityIds', ...key))
      throw new ModuleError('Schemas', 'NameAlreadyExists');
    return { key, combined: `${namespace}.${descriptor}` };
  };

  /** Every intent id must be at most the highest registered (existence is not checked, as in the runtime). */
  const checkIntentIds = (context: DispatchContext, intentIds: Codec) => {
    const maximum = numberOf(context.storage.get(context.state, 'Schemas', 'CurrentIntentIdentifierMaximum'));
    const ids = (intentIds as unknown as Codec[]).map(numberOf);
    if (ids.some((id) => id > maximum)) throw new ModuleError('Schemas', 'InvalidIntentId');
    return ids;
  };

  const createIntentGroup = (context: DispatchContext, key: string, args: Record<string, Codec>) => {
    const name = newName(context, args.intentGroupName as Codec);
    const intentIds = checkIntentIds(context, args.intentIds as Codec);
    const id = numberOf(context.storage.get(context.state, 'Schemas', 'CurrentIntentGroupIdentifierMaximum')) + 1;
    if (id > 0xffff) throw new ModuleError('Schemas', 'IntentGroupCountOverflow');
    context.storage.set(context.state, 'Schemas', 'CurrentIntentGroupIdentifierMaximum', [], id);
    context.storage.set(context.state, 'Schemas', 'NameToMappedEntityIds', name.key, { IntentGroup: id });
    context.storage.set(context.state, 'Schemas', 'IntentGroups', [id], { intentIds });
    context.deposit('Schemas', 'IntentGroupCreated', {
      key,
      intentGroupId: id,
      intentGroupName: u8aToHex(stringToU8a(name.combined)),
    });
  };

  const updateIntentGroup = (context: DispatchContext, key: string, args: Record<string, Codec>) => {
    const id = numberOf(args.intentGroupId as Codec);
    if (!context.storage.has(context.state, 'Schemas', 'IntentGroups', id))
      throw new ModuleError('Schemas', 'InvalidIntentGroupId');
    const intentIds = checkIntentIds(context, args.intentIds as Codec);
    context.storage.set(context.state, 'Schemas', 'IntentGroups', [id], { intentIds });
    context.deposit('Schemas', 'IntentGroupUpdated', { key, intentGroupId: id });
  };

  return {
    name: 'Schemas',
    genesis: (context) => writeGenesis(context, genesis, models),
    calls: {
      createIntent: (context, args) => createIntent(context, signer(context), args),
      createIntentViaGovernance: (context, args) => {
        root(context);
        createIntent(context, (args.creatorKey as Codec).toHex(), args);
      },
      createSchemaV4: (context, args) => createSchema(context, signer(context), args),
      createIntentGroup: (context, args) => createIntentGroup(context, signer(context), args),
      createIntentGroupViaGovernance: (context, args) => {
        root(context);
        createIntentGroup(context, (args.creatorKey as Codec).toHex(), args);
      },
      updateIntentGroup: (context, args) => updateIntentGroup(context, signer(context), args),
      updateIntentGroupViaGovernance: (context, args) => {
        root(context);
        updateIntentGroup(context, (args.updaterKey as Codec).toHex(), args);
      },
      createSchemaViaGovernanceV3: (context, args) => {
        root(context);
        createSchema(context, (args.creatorKey as Codec).toHex(), args);
      },
      setMaxSchemaModelBytes: (context, args) => {
        root(context);
        const size = numberOf(args.maxSize as Codec);
        // The runtime's hard bound on model bytes (SchemaModelMaxBytesBoundedVecLimit).
        const hardLimit = Number(
          (facts.constants.Schemas as Record<string, { value: unknown }>).schemaModelMaxBytesBoundedVecLimit?.value,
        );
        if (size > hardLimit) throw new ModuleError('Schemas', 'ExceedsMaxSchemaModelBytes');
        context.storage.set(context.state, 'Schemas', 'GovernanceSchemaModelMaxBytes', [], size);
        context.deposit('Schemas', 'SchemaMaxSizeChanged', { maxSize: size });
      },
    },
  };
}
