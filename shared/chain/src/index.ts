export { connectChain, ChainNotReadyError, type ChainConnection, type ConnectOptions } from './connection.js';
export { loadProviderKey, verifyProvider, ProviderIdentityError, type ProviderKey } from './provider.js';
export { NonceManager, type NonceManagerOptions } from './nonces.js';
