export * from './errors.js';
export * from './route.js';
export * from './openapi.js';
export * from './app.js';
export * from './basePath.js';
export * from './server.js';
