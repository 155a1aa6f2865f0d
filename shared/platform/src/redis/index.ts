export * from './connection.js';
export * from './check.js';
