export * from './requestStatusStore.js';
export * from './routes.js';
export * from './intake.js';
export * from './variables.js';
export * from './relay.js';
export * from './serviceRequests.js';
