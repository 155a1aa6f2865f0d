export * from './jobQueues.js';
export * from './board.js';
export * from './jobIds.js';
export * from './retention.js';
export * from './runClaims.js';
