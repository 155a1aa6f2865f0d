import type { RedisClient } from './connection.js';
import { scanKeys } from './scan.js';

/**
 * One change of a service's key layout, from version `to - 1` to `to`, run by the `migrate` command. It must be
 * safe to run again (a run cut short is run again from the start), and it runs while no component of the newer
 * version serves (the chart runs `migrate` in a pre-upgrade hook).
 */
export interface LayoutMigration {
  to: number;
  /** What it changes, for the log of a run. */
  description: string;
  run(redis: RedisClient, keyspace: string): Promise<void>;
}

/** The key layout a service's components read and write: its version, and the migrations that lead to it. */
export interface KeyspaceLayout {
  version: number;
  migrations: readonly LayoutMigration[];
}

/** The layout every service has had since layouts carry a version. */
export const FIRST_LAYOUT: KeyspaceLayout = { version: 1, migrations: [] };

/** Where a keyspace keeps the version of its layout. */
export const layoutKey = (keyspace: string) => `${keyspace}:layout`;

/** A keyspace whose layout this version of the gateway does not read: it names what to do. */
export class KeyspaceLayoutError extends Error {
  constructor(
    readonly keyspace: string,
    readonly found: number,
    readonly expected: number,
  ) {
    super(
      found < expected
        ? `the keyspace ${keyspace} has key layout ${found}, and this gateway reads layout ${expected}: run its \`migrate\` command first (the chart's pre-upgrade hook does)`
        : `the keyspace ${keyspace} has key layout ${found}, written by a newer gateway; this one reads layout ${expected}: run the newer version`,
    );
    this.name = 'KeyspaceLayoutError';
  }
}

/**
 * The keyspace's layout version. One that carries none is stamped: with the current version when it holds no key
 * (a new deployment), with 1 when it does (it was written before layouts carried a version).
 */
export async function keyspaceLayout(redis: RedisClient, keyspace: string, current: number): Promise<number> {
  const key = layoutKey(keyspace);
  const stored = await redis.get(key);
  if (stored !== null) return Number(stored);
  let used = false;
  for await (const found of scanKeys(redis, `${keyspace}:*`)) {
    if (found !== key) {
      used = true;
      break;
    }
  }
  await redis.set(key, String(used ? FIRST_LAYOUT.version : current), 'NX');
  return Number(await redis.get(key));
}

/** Throws KeyspaceLayoutError unless the keyspace has the layout `layout` describes (see keyspaceLayout). */
export async function expectLayout(redis: RedisClient, keyspace: string, layout: KeyspaceLayout): Promise<void> {
  const found = await keyspaceLayout(redis, keyspace, layout.version);
  if (found !== layout.version) throw new KeyspaceLayoutError(keyspace, found, layout.version);
}

/**
 * Brings the keyspace to `layout.version`, running each migration after the stored version in order and storing
 * the version after each; resolves with the versions it went from and to. A keyspace of a newer layout is
 * refused, and so is a layout whose migrations do not lead from one version to the next.
 */
export async function migrateLayout(
  redis: RedisClient,
  keyspace: string,
  layout: KeyspaceLayout,
  onStep: (migration: LayoutMigration) => void = () => undefined,
): Promise<{ from: number; to: number }> {
  const from = await keyspaceLayout(redis, keyspace, layout.version);
  if (from > layout.version) throw new KeyspaceLayoutError(keyspace, from, layout.version);
  let version = from;
  for (const migration of [...layout.migrations].sort((a, b) => a.to - b.to)) {
    if (migration.to <= version) continue;
    if (migration.to !== version + 1)
      throw new Error(`no migration of ${keyspace} from layout ${version} to ${version + 1}`);
    onStep(migration);
    await migration.run(redis, keyspace);
    await redis.set(layoutKey(keyspace), String(migration.to));
    version = migration.to;
  }
  if (version !== layout.version)
    throw new Error(`no migration of ${keyspace} from layout ${version} to ${layout.version}`);
  return { from, to: version };
}
