import type { RedisClient } from './connection.js';
import type { Logger } from '../logging/index.js';

/** Why Redis cannot be used: it refuses the configured credentials, or it cannot be reached at all. */
export type RedisFailureKind = 'credentials' | 'unreachable';

export interface RedisFailure {
  kind: RedisFailureKind;
  /** What a caller may be told (a 503's message): no host, no secret. */
  summary: string;
  /** What Redis or the socket said (`WRONGPASS …`, `connect ECONNREFUSED …`), for logs and readiness. */
  detail: string;
}

const SUMMARIES: Record<RedisFailureKind, string> = {
  credentials: 'Redis refused the credentials',
  unreachable: 'Redis is unreachable',
};

/** Redis' answers to a password or user it does not accept (AUTH, HELLO AUTH, or a command before either). */
const REFUSED_CREDENTIALS = /^(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i;
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/**
 * What ioredis and BullMQ say when a command meets no usable connection: closed, not writable with the offline
 * queue off, out of retries, aborted by a close; and Redis itself while it loads its data after a restart.
 */
const CONNECTION_MESSAGES = [
  /^Connection is closed/,
  /^Stream isn't writeable/,
  /^Reached the max retries per request limit/,
  /^Command aborted due to connection close/,
  /^LOADING\b/,
];

const failure = (kind: RedisFailureKind, detail: string): RedisFailure => ({ kind, summary: SUMMARIES[kind], detail });

/** A command or connection could not use Redis; `failure` says why, safe to show. */
export class RedisUnavailableError extends Error {
  constructor(
    readonly failure: RedisFailure,
    /** The error that showed it, when it showed only a symptom ("Stream isn't writeable"). */
    options?: ErrorOptions,
  ) {
    super(`${failure.summary} (${failure.detail})`, options);
    this.name = 'RedisUnavailableError';
  }
}

/** The failure an error stands for, when it is one of Redis being unusable (and not, say, a script error). */
export function redisFailureOf(error: unknown): RedisFailure | undefined {
  if (error instanceof RedisUnavailableError) return error.failure;
  if (!(error instanceof Error)) return undefined;
  if (REFUSED_CREDENTIALS.test(error.message)) return failure('credentials', error.message);
  const code = (error as NodeJS.ErrnoException).code;
  if ((code && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.some((pattern) => pattern.test(error.message)))
    return failure('unreachable', error.message);
  return undefined;
}

export interface RedisAvailabilityOptions {
  logger: Logger;
  /** While Redis stays unusable, a reminder with the number of failed attempts is logged this often. */
  reminderMs?: number;
  now?: () => number;
}

type FailureListener = (failure: RedisFailure) => void;

/**
 * What the component knows about Redis, from the connections it watches: whether each refuses the credentials
 * or cannot connect, since when, and how often it tried. It lets a request fail at once with the real reason
 * ("Redis refused the credentials") instead of waiting on a connection that will not come, or reporting the
 * symptom ("Stream isn't writeable").
 *
 * It logs no transition itself (the readiness check says it once, with the same reason): while the failure
 * lasts, it logs a reminder once per `reminderMs` with the count of failed connection attempts, where ioredis
 * and BullMQ would report every attempt of every connection (dozens of identical lines a minute).
 */
export class RedisAvailability {
  private readonly failing = new Map<RedisClient, RedisFailure>();
  private readonly listeners = new Map<RedisClient, Set<FailureListener>>();
  /** Connections with an offline queue, switched to failing fast while the credentials are refused. */
  private readonly offlineQueueHeld = new Set<RedisClient>();
  private attempts = 0;
  private lastReminder = 0;

  constructor(private readonly options: RedisAvailabilityOptions) {}

  /** Follows the connection's errors and recoveries. Returns it, for `watch(openRedis(…))`. */
  watch<C extends RedisClient>(connection: C): C {
    connection.on('error', (error: unknown) => this.noticeError(connection, error));
    connection.on('ready', () => this.noticeReady(connection));
    return connection;
  }

  /** Why this connection cannot be used now, when it is known to fail. */
  failureOf(connection: RedisClient): RedisFailure | undefined {
    return this.failing.get(connection);
  }

  /** Why Redis cannot be used now, from any watched connection (refused credentials first). */
  current(): RedisFailure | undefined {
    let found: RedisFailure | undefined;
    for (const known of this.failing.values()) {
      if (known.kind === 'credentials') return known;
      found ??= known;
    }
    return found;
  }

  /**
   * An error that means Redis is unusable, as the error that says why: a RedisUnavailableError with the real
   * cause, carrying the error that showed it. Undefined for any other error.
   */
  unavailableError(error: unknown): RedisUnavailableError | undefined {
    if (error instanceof RedisUnavailableError) return error;
    const known = this.explain(error);
    return known ? new RedisUnavailableError(known, { cause: error }) : undefined;
  }

  /**
   * The failure an error stands for, told by its real cause: a command refused because the connection is down
   * says only that; when the connections know Redis refuses the credentials, that is the answer.
   */
  explain(error: unknown): RedisFailure | undefined {
    const own = redisFailureOf(error);
    if (!own || own.kind === 'credentials') return own;
    return this.current() ?? own;
  }

  /** Calls `listener` the next time this connection fails; returns a function that stops listening. */
  onFailure(connection: RedisClient, listener: FailureListener): () => void {
    let set = this.listeners.get(connection);
    if (!set) this.listeners.set(connection, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  private noticeError(connection: RedisClient, error: unknown): void {
    const known = redisFailureOf(error);
    if (!known) return;
    // A connection refused its credentials also reports the resulting close as "Connection is closed": keep the cause.
    const previous = this.failing.get(connection);
    const next = previous?.kind === 'credentials' && known.kind === 'unreachable' ? previous : known;
    this.failing.set(connection, next);
    if (next.kind === 'credentials') this.holdOfflineQueue(connection);
    for (const listener of [...(this.listeners.get(connection) ?? [])]) listener(next);
    this.countAttempt();
  }

  private noticeReady(connection: RedisClient): void {
    this.failing.delete(connection);
    this.releaseOfflineQueue(connection);
    // The credentials this one was accepted with are no longer refused on the others either: they only wait for
    // their next attempt, and their commands may wait for it too.
    for (const [other, failure] of this.failing) {
      if (failure.kind !== 'credentials') continue;
      this.failing.delete(other);
      this.releaseOfflineQueue(other);
    }
    if (this.failing.size === 0) {
      this.attempts = 0;
      this.lastReminder = 0;
    }
  }

  /**
   * A connection with an offline queue keeps commands until it reconnects: right while Redis restarts, useless
   * while it refuses the credentials (that takes a configuration change). Commands then fail at once instead of
   * waiting for the next refused attempt; the queue comes back with the connection.
   */
  private holdOfflineQueue(connection: RedisClient): void {
    if (!connection.options.enableOfflineQueue) return;
    connection.options.enableOfflineQueue = false;
    this.offlineQueueHeld.add(connection);
  }

  private releaseOfflineQueue(connection: RedisClient): void {
    if (!this.offlineQueueHeld.delete(connection)) return;
    connection.options.enableOfflineQueue = true;
  }

  private countAttempt(): void {
    const now = (this.options.now ?? Date.now)();
    this.attempts += 1;
    if (this.lastReminder === 0) {
      // The first failure is told by the readiness check; the reminders count from here.
      this.lastReminder = now;
      this.attempts = 0;
      return;
    }
    if (now - this.lastReminder < (this.options.reminderMs ?? 60_000)) return;
    const current = this.current();
    if (current) {
      const since = new Date(this.lastReminder).toISOString();
      this.options.logger.warn(
        { redis: current.kind, cause: current.detail, failedAttempts: this.attempts, since },
        `${current.summary} still: ${this.attempts} failed connection attempts since ${since}`,
      );
    }
    this.lastReminder = now;
    this.attempts = 0;
  }
}
