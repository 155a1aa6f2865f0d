export * from './connection.js';
export * from './availability.js';
export * from './check.js';
export * from './script.js';
export * from './turnBatch.js';
export * from './rateWindow.js';
export * from './memoryMetrics.js';
