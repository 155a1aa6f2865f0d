export * from './jobQueues.js';
export * from './board.js';
