export * from './backing.js';
export * from './components.js';
export * from './localGateway.js';
