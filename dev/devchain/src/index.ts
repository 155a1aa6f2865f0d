export { startDevchain, type Devchain, type DevchainOptions } from './devchain.js';
export { buildMetadata, type RuntimeMetadata } from './metadata/buildMetadata.js';
export { loadFacts, type RuntimeFacts } from './metadata/facts.js';
export { devKeyring, DEV_NAMES } from './genesis/devAccounts.js';
export { DEV_PROVIDER } from './genesis/devProvider.js';
export {
  GenesisFileError,
  parseExtraGenesis,
  readExtraGenesis,
  type ExtraGenesis,
  type ExtraGenesisInput,
} from './genesis/extraGenesis.js';
export { BasePathError } from './chain/basePath.js';
export { spawnDevchain, type DevchainProcess, type DevchainProcessOptions } from './process.js';
export { devchainControl, type DevchainControl, type ReorgAnswer } from './control.js';
export {
  genesisSchemaModels,
  type IntentFact,
  type SchemaFact,
  type SchemasGenesis,
  type SchemaModels,
} from './pallets/schemas/index.js';
export { dsnpModels, genesisOnlyModels } from './pallets/schemas/models.js';
