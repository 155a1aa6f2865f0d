export * from './registry.js';
export * from './route.js';
