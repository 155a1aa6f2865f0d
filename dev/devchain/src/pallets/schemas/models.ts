import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * Where each current DSNP intent's model lives in @dsnp/schemas. (The package's index also loads a Parquet
 * writer, so the model modules are imported one by one.)
 */
const DSNP_MODEL_MODULES: Record<string, string> = {
  'dsnp.tombstone': 'parquet/tombstone.js',
  'dsnp.broadcast': 'parquet/broadcast.js',
  'dsnp.reply': 'parquet/reply.js',
  'dsnp.reaction': 'parquet/reaction.js',
  'dsnp.update': 'parquet/update.js',
  'dsnp.user-attribute-set': 'parquet/user-attribute-set.js',
  'dsnp.dsnp-content-attribute-set': 'parquet/dsnp-content-attribute-set.js',
  'dsnp.ext-content-attribute-set': 'parquet/external-content-attribute-set.js',
  'dsnp.public-key-key-agreement': 'avro/PublicKey.js',
  'dsnp.public-key-assertion-method': 'avro/PublicKey.js',
  'dsnp.profile-resources': 'avro/ProfileResource.js',
};

/** The models @dsnp/schemas publishes, by intent name, serialized as compact JSON (as genesis stores them). */
export async function dsnpModels(): Promise<Map<string, string>> {
  const root = join(dirname(dirname(require.resolve('@dsnp/schemas'))), 'esm');
  const models = new Map<string, string>();
  for (const [name, module] of Object.entries(DSNP_MODEL_MODULES)) {
    const loaded = (await import(pathToFileURL(join(root, module)).href)) as { default: unknown };
    models.set(name, JSON.stringify(loaded.default));
  }
  return models;
}

/**
 * Genesis models @dsnp/schemas does not publish (older DSNP versions, the graph chunk records, the legacy
 * profile and the ICS records), by schema id, from the development genesis of Frequency v2.0.1.
 */
export function genesisOnlyModels(): Map<number, string> {
  const file = new URL('../../../runtime/genesis-schema-models.json', import.meta.url);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { models: Record<string, string> };
  return new Map(Object.entries(parsed.models).map(([id, model]) => [Number(id), model]));
}
