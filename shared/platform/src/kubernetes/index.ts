export * from './inCluster.js';
export * from './podEvents.js';
export * from './readinessEvents.js';
export * from './ensureSecret.js';
export * from './keepReplicas.js';
