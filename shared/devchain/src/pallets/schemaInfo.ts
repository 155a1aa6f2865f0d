import type { Codec } from '@polkadot/types/types';
import { numberOf, someOf } from '../runtime/codecs.js';
import type { Reader } from './msa/accounts.js';

export interface SchemaInfo {
  intentId: number;
  payloadLocation: string;
  modelType: string;
  settings: number;
}

export function schemaInfo(reader: Reader, schemaId: number): SchemaInfo | undefined {
  const info = someOf<Record<string, Codec>>(reader.storage.get(reader.state, 'Schemas', 'SchemaInfos', schemaId));
  if (!info) return undefined;
  return {
    intentId: numberOf(info.intentId as Codec),
    payloadLocation: (info.payloadLocation as Codec).toString(),
    modelType: (info.modelType as Codec).toString(),
    settings: numberOf(info.settings as Codec),
  };
}
