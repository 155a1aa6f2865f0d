export * from './shutdown.js';
export * from './processGuard.js';
