export * from './contentStore.js';
export * from './hash.js';
export { EmbeddedStore } from './embedded.js';
export { contentId } from './unixfs.js';
export { KuboStore, type KuboStoreOptions } from './kubo.js';
export { serveGateway, type GatewayServer } from './gateway.js';
export {
  storageVariables,
  openContentStore,
  contentStoreCheck,
  StorageConfigError,
  type StorageConfig,
} from './config.js';
