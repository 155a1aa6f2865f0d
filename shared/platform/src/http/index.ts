export * from './errors.js';
export * from './route.js';
export * from './metricsRoute.js';
export * from './openapi.js';
export * from './app.js';
export * from './basePath.js';
export * from './bearerTokens.js';
export * from './rateLimit.js';
export * from './trustProxy.js';
export * from './server.js';
// Also carries the Request augmentation (req.id, req.log) to packages compiled against the declarations.
export * from './requestContext.js';
