export * from './logger.js';
export * from './console.js';
