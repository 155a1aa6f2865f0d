export * from './announcements.js';
export * from './uris.js';
export * from './activityContent.js';
export * from './parquet.js';
