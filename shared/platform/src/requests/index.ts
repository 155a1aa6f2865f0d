export * from './store.js';
export * from './routes.js';
