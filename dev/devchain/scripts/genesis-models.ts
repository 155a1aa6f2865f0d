/**
 * Regenerates runtime/genesis-schema-models.json from Frequency's `resources/genesis-schemas.json`: the model
 * of every genesis schema that @dsnp/schemas does not publish identically (the devchain takes the others from
 * @dsnp/schemas). Later entries with the same id win, as in the runtime's genesis build.
 *
 *   node --import tsx --conditions=source scripts/genesis-models.ts path/to/genesis-schemas.json
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dsnpModels } from '../src/pallets/schemas/models.js';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: genesis-models.ts <genesis-schemas.json>' + '\n');
  process.exit(2);
}
interface Genesis {
  intents: { intent_id: number; name: string }[];
  schemas: { schema_id: number; intent_id: number; model: string }[];
}
const genesis = JSON.parse(readFileSync(source, 'utf8')) as Genesis;
const fromPackage = await dsnpModels();
const models: Record<number, string> = {};
for (const schema of genesis.schemas) {
  const names = genesis.intents.filter((i) => i.intent_id === schema.intent_id).map((i) => i.name);
  const packaged = names.map((name) => fromPackage.get(name)).find((model) => model !== undefined);
  if (packaged === schema.model) delete models[schema.schema_id];
  else models[schema.schema_id] = schema.model;
}
const target = new URL('../runtime/genesis-schema-models.json', import.meta.url);
writeFileSync(
  target,
  JSON.stringify({ about: 'genesis schema models not in @dsnp/schemas, Frequency v2.0.1', models }, null, 1) + '\n',
);
process.stdout.write(`${Object.keys(models).length} models written to ${target.pathname}` + '\n');
