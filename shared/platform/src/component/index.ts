export * from './variables.js';
export * from './runtime.js';
export * from './redisTarget.js';
export * from './entrypoint.js';
