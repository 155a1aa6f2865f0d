export * from './lease.js';
export * from './elector.js';
export * from './redisLease.js';
export * from './kubernetesLease.js';
