import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from './connection.js';

/** A Lua script file that does not say what its KEYS and ARGV are. */
export class ScriptHeaderError extends Error {
  constructor(file: string) {
    super(`${file}: a Redis script starts with comments that say what its KEYS and ARGV are (-- KEYS: …, -- ARGV: …)`);
    this.name = 'ScriptHeaderError';
  }
}

/**
 * A Lua script run by its SHA (EVALSHA), its text sent only when Redis does not know it yet (first use, or
 * after a restart or SCRIPT FLUSH). Keys are declared, so the script stays valid for Redis' key checks. A
 * script built without a number of keys takes as many as each call gives (one record or many).
 *
 * Scripts live in `.lua` files beside the module that runs them (`RedisScript.fromFile(new URL('./x.lua',
 * import.meta.url))`), each opening with comments that say what KEYS and ARGV hold and naming them in locals;
 * the build copies them into dist/ beside the compiled module.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(
    private readonly source: string,
    private readonly numberOfKeys?: number,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** The script in `file` (read once, at load), refused without its KEYS/ARGV header. */
  static fromFile(file: URL, numberOfKeys?: number): RedisScript {
    const path = fileURLToPath(file);
    const source = readFileSync(path, 'utf8');
    const lines = source.split('\n');
    const header = lines.slice(
      0,
      lines.findIndex((line) => !line.startsWith('--')),
    );
    if (!header.some((line) => /^-- KEYS\b/.test(line)) || !header.some((line) => /^-- ARGV\b/.test(line)))
      throw new ScriptHeaderError(path);
    return new RedisScript(source, numberOfKeys);
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[] = []): Promise<unknown> {
    if (this.numberOfKeys !== undefined && keys.length !== this.numberOfKeys)
      throw new RangeError(`the script takes ${this.numberOfKeys} keys, ${keys.length} given`);
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
