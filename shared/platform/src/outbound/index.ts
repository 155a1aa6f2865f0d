export {
  refusedRangeOf,
  parseAddress,
  RANGE_WORDING,
  type AddressVerdict,
  type RefusedRange,
} from './addressRanges.js';
export {
  allowedDestinations,
  LOOPBACK_DESTINATIONS,
  NOTHING_ALLOWED,
  parseAllowedDestinations,
  type AllowedDestinations,
} from './allowedDestinations.js';
export * from './policy.js';
export * from './post.js';
export * from './shownUrl.js';
export * from './urlSchema.js';
export * from './variables.js';
