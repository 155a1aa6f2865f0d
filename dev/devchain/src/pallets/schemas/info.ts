import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aToHex } from '@polkadot/util';
import { numberOf, someOf } from '../../runtime/codecs.js';
import type { Reader } from '../msa/accounts.js';
import { parseSchemaName } from './names.js';

/** IntentSetting bit flags as stored (IntentSettings is a BitFlags<u16>). */
export const SETTING_BITS: Record<string, number> = { AppendOnly: 1, SignatureRequired: 2 };

export const settingNames = (bits: number) =>
  Object.keys(SETTING_BITS).filter((name) => bits & (SETTING_BITS[name] as number));

export interface SchemaInfo {
  intentId: number;
  payloadLocation: string;
  modelType: string;
  settings: number;
  status: string;
}

export function schemaInfo(reader: Reader, schemaId: number): SchemaInfo | undefined {
  const info = someOf<Record<string, Codec>>(reader.storage.get(reader.state, 'Schemas', 'SchemaInfos', schemaId));
  if (!info) return undefined;
  return {
    intentId: numberOf(info.intentId as Codec),
    payloadLocation: (info.payloadLocation as Codec).toString(),
    modelType: (info.modelType as Codec).toString(),
    settings: numberOf(info.settings as Codec),
    status: (info.status as Codec).toString(),
  };
}

export interface IntentInfo {
  payloadLocation: string;
  settings: number;
}

export function intentInfo(reader: Reader, intentId: number): IntentInfo | undefined {
  const info = someOf<Record<string, Codec>>(reader.storage.get(reader.state, 'Schemas', 'IntentInfos', intentId));
  if (!info) return undefined;
  return { payloadLocation: (info.payloadLocation as Codec).toString(), settings: numberOf(info.settings as Codec) };
}

/** The name key of NameToMappedEntityIds: (namespace bytes, descriptor bytes). */
export const nameKey = (namespace: string, descriptor: string): [string, string] => [
  u8aToHex(stringToU8a(namespace)),
  u8aToHex(stringToU8a(descriptor)),
];

export function schemaModel(reader: Reader, schemaId: number): Uint8Array {
  return reader.storage.get(reader.state, 'Schemas', 'SchemaPayloads', schemaId).toU8a(true);
}

/** SchemaResponseV2 (SchemasRuntimeApi get_schema_by_id), or undefined. */
export function schemaResponse(reader: Reader, schemaId: number) {
  const info = schemaInfo(reader, schemaId);
  if (!info) return undefined;
  return {
    schemaId,
    intentId: info.intentId,
    model: schemaModel(reader, schemaId),
    modelType: info.modelType,
    status: info.status,
    payloadLocation: info.payloadLocation,
    settings: settingNames(info.settings),
  };
}

/** Every schema implementing an intent, ascending, without Unsupported ones. */
export function schemasOfIntent(reader: Reader, intentId: number): number[] {
  const maximum = numberOf(reader.storage.get(reader.state, 'Schemas', 'CurrentSchemaIdentifierMaximum'));
  const ids: number[] = [];
  // Genesis ids are 1..23 and later ones start above the genesis maximum; walk what exists.
  for (const key of reader.state.keys(reader.storage.prefix('Schemas', 'SchemaInfos'))) {
    const id = reader.storage.registry.createType('u16', hexToU8a(key).slice(-2)).toNumber();
    if (id > maximum) continue;
    const info = schemaInfo(reader, id);
    if (info && info.intentId === intentId && info.status !== 'Unsupported') ids.push(id);
  }
  return ids.sort((a, b) => a - b);
}

/** IntentResponse (SchemasRuntimeApi get_intent_by_id). */
export function intentResponse(reader: Reader, intentId: number, includeSchemas: boolean) {
  const info = intentInfo(reader, intentId);
  if (!info) return undefined;
  return {
    intentId,
    payloadLocation: info.payloadLocation,
    settings: settingNames(info.settings),
    schemaIds: includeSchemas ? schemasOfIntent(reader, intentId) : null,
  };
}

/** NameLookupResponse entries for "namespace.descriptor", or for every name of a bare namespace. */
export function registeredEntitiesByName(reader: Reader, name: Uint8Array) {
  let parsed;
  try {
    parsed = parseSchemaName(name, false);
  } catch {
    return undefined;
  }
  const { registry } = reader.storage;
  const found: { name: Uint8Array; entityId: unknown }[] = [];
  if (parsed.descriptor !== undefined) {
    // A ValueQuery item: absence reads as the default, so presence is checked first.
    const key = nameKey(parsed.namespace, parsed.descriptor);
    if (reader.storage.has(reader.state, 'Schemas', 'NameToMappedEntityIds', ...key)) {
      const entity = reader.storage.get(reader.state, 'Schemas', 'NameToMappedEntityIds', ...key);
      found.push({ name: stringToU8a(`${parsed.namespace}.${parsed.descriptor}`), entityId: entity });
    }
  } else {
    const prefix = hexToU8a(
      reader.storage.prefix('Schemas', 'NameToMappedEntityIds', u8aToHex(stringToU8a(parsed.namespace))),
    );
    for (const key of reader.state.keys(u8aToHex(prefix))) {
      // Blake2_128Concat(namespace) ‖ Blake2_128Concat(descriptor): the descriptor's SCALE bytes follow 16 hash bytes.
      const descriptor = registry.createType('Bytes', hexToU8a(key).slice(prefix.length + 16)).toU8a(true);
      found.push({
        name: stringToU8a(`${parsed.namespace}.${new TextDecoder().decode(descriptor)}`),
        entityId: registry.createType('CommonPrimitivesSchemaMappedEntityIdentifier', reader.state.get(key)),
      });
    }
  }
  return found.length > 0 ? found : undefined;
}

/** IntentGroupResponse (SchemasRuntimeApi get_intent_group_by_id), or undefined. */
export function intentGroupResponse(reader: Reader, intentGroupId: number) {
  const group = someOf<{ intentIds: Codec[] }>(
    reader.storage.get(reader.state, 'Schemas', 'IntentGroups', intentGroupId),
  );
  if (!group) return undefined;
  return { intentGroupId, intentIds: [...group.intentIds].map(numberOf) };
}

/**
 * SchemaVersionResponse entries (the deprecated get_schema_versions_by_name): for each intent the name resolves
 * to (intent groups are left out), its schemas ascending, numbered from version 1.
 */
export function schemaVersionsByName(reader: Reader, name: Uint8Array) {
  const entities = registeredEntitiesByName(reader, name);
  if (!entities) return undefined;
  return entities.flatMap(({ name: entityName, entityId }) => {
    const entity = entityId as { isIntent: boolean; asIntent: Codec };
    if (!entity.isIntent) return [];
    const intentId = numberOf(entity.asIntent);
    const ids: number[] = [];
    for (const key of reader.state.keys(reader.storage.prefix('Schemas', 'SchemaInfos'))) {
      const id = reader.storage.registry.createType('u16', hexToU8a(key).slice(-2)).toNumber();
      if (schemaInfo(reader, id)?.intentId === intentId) ids.push(id);
    }
    return ids
      .sort((a, b) => a - b)
      .map((schemaId, index) => ({ schemaName: entityName, schemaVersion: index + 1, schemaId }));
  });
}
