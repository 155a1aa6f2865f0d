export * from './variables.js';
export * from './runtime.js';
export * from './entrypoint.js';
