export * from './readiness.js';
export * from './liveness.js';
export * from './routes.js';
