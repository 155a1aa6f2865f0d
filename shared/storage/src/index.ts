export * from './store.js';
export * from './hash.js';
export { EmbeddedStore } from './embedded.js';
export { KuboStore, type KuboStoreOptions } from './kubo.js';
export { serveGateway, type GatewayServer } from './gateway.js';
