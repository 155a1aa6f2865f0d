/**
 * The Redis key namespace of a service: its CACHE_KEY_PREFIX as a hash tag, `{prefix}`. Every key a service
 * writes starts with it (BullMQ's among them, under `{prefix}:bull`), so Redis Cluster puts all of them in one
 * hash slot and the scripts and transactions that touch several keys at once run there unchanged. On a single
 * Redis or behind Sentinel the braces are only part of the name. Given a namespace already, returns it as it is.
 */
export function redisKeyspace(prefix: string): string {
  return prefix.startsWith('{') && prefix.endsWith('}') ? prefix : `{${prefix}}`;
}
