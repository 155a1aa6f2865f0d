import type { ApiPromise } from '@polkadot/api';

export interface Intent {
  intentId: number;
  payloadLocation: string;
  settings: string[];
  /** Ascending; the last is the intent's latest schema. */
  schemaIds: number[];
  latestSchemaId: number | undefined;
}

export interface Schema {
  schemaId: number;
  intentId: number;
  model: Uint8Array;
  modelType: string;
  payloadLocation: string;
  settings: string[];
  status: string;
}

const toNumber = (value: { toNumber(): number }) => value.toNumber();

/** An intent by its id, with its schemas (schemasRuntimeApi). */
export async function intentById(api: ApiPromise, intentId: number): Promise<Intent | undefined> {
  const response = await api.call.schemasRuntimeApi.getIntentById(intentId, true);
  if (response.isNone) return undefined;
  const value = response.unwrap();
  const schemaIds = value.schemaIds.isSome ? value.schemaIds.unwrap().map(toNumber) : [];
  return {
    intentId: value.intentId.toNumber(),
    payloadLocation: value.payloadLocation.toString(),
    settings: value.settings.map(String),
    schemaIds,
    latestSchemaId: schemaIds.at(-1),
  };
}

/** An intent by its "namespace.descriptor" name (case-insensitive), with its schemas. */
export async function intentByName(api: ApiPromise, name: string): Promise<Intent | undefined> {
  const found = await api.call.schemasRuntimeApi.getRegisteredEntitiesByName(name);
  const entity = found.isSome ? found.unwrap()[0]?.entityId : undefined;
  if (!entity?.isIntent) return undefined;
  return intentById(api, entity.asIntent.toNumber());
}

/** A schema by its id (schemasRuntimeApi). */
export async function schemaById(api: ApiPromise, schemaId: number): Promise<Schema | undefined> {
  const response = await api.call.schemasRuntimeApi.getSchemaById(schemaId);
  if (response.isNone) return undefined;
  const value = response.unwrap();
  return {
    schemaId: value.schemaId.toNumber(),
    intentId: value.intentId.toNumber(),
    model: value.model.toU8a(true),
    modelType: value.modelType.toString(),
    payloadLocation: value.payloadLocation.toString(),
    settings: value.settings.map(String),
    status: value.status.toString(),
  };
}
