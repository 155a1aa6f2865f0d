export * from './connection.js';
export * from './check.js';
export * from './script.js';
export * from './turnBatch.js';
