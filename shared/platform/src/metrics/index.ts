export * from './registry.js';
export * from './scrapedGauges.js';
