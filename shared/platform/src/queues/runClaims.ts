import type { RedisClient } from '../redis/connection.js';

/**
 * A job run's claim on what it acts on (a request, a publication): a fencing token. Each run of a job claims
 * at its start, taking the claim over from any earlier run of the same job that may still be going (a worker
 * that stalled past its lock: BullMQ ran the job again). Every write a run makes afterwards that must not be
 * made twice (recording a transaction, forgetting one, ending a request) checks, in the same Redis script,
 * that the run still holds the claim; a run that lost it is stale, and its write is refused.
 */
export interface RunClaim {
  /** The key that holds the claim: a string key, or a hash with `field`. */
  key: string;
  field?: string;
  /** The run's token (JobContext.run). */
  token: string;
}

/** A run's write was refused: a later run of the same job holds the claim. The run must stop, writing nothing. */
export class StaleRunError extends Error {
  constructor(readonly claim: RunClaim) {
    super(`a later run of the job holds ${claim.key}${claim.field ? ` ${claim.field}` : ''}: this run stops`);
    this.name = 'StaleRunError';
  }
}

/** Takes the claim for a run (over any earlier run's), keeping it `ttlSeconds`. */
export async function takeClaim(redis: RedisClient, claim: RunClaim, ttlSeconds: number): Promise<void> {
  if (claim.field === undefined) await redis.set(claim.key, claim.token, 'EX', ttlSeconds);
  else await redis.multi().hset(claim.key, claim.field, claim.token).expire(claim.key, ttlSeconds).exec();
}

/** Whether the run still holds its claim (a check before costly work; the writes check again atomically). */
export async function holdsClaim(redis: RedisClient, claim: RunClaim): Promise<boolean> {
  const held = claim.field === undefined ? await redis.get(claim.key) : await redis.hget(claim.key, claim.field);
  return held === claim.token;
}

/**
 * The claims as a script's KEYS and ARGV: KEYS are the claims' keys; ARGV per claim its field ('' for a string
 * key) and token. Scripts check them with the loop of `claimsHeld` (see recordTransaction.lua, updateRequest.lua).
 */
export function claimArguments(claims: readonly RunClaim[]): { keys: string[]; args: string[] } {
  return {
    keys: claims.map((claim) => claim.key),
    args: claims.flatMap((claim) => [claim.field ?? '', claim.token]),
  };
}
