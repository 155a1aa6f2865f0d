export * from './variable.js';
export * from './load.js';
export * from './redact.js';
export * from './reference.js';
export * from './referenceNames.js';
