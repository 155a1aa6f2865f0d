export * from './registry.js';
export * from './route.js';
export * from './scrapedGauges.js';
