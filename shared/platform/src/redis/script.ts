import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA (EVALSHA), its text sent only when Redis does not know it yet (first use, or
 * after a restart or SCRIPT FLUSH). Keys are declared, so the script stays valid for Redis' key checks. A
 * script built without a number of keys takes as many as each call gives (one record or many).
 */
export class RedisScript {
  private readonly sha: string;

  constructor(
    private readonly source: string,
    private readonly numberOfKeys?: number,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * A script kept in `.lua` files beside its module (`new URL('./name.lua', import.meta.url)`), their texts joined
   * in order (a file of shared local functions first), read when the module loads: the build copies `.lua` files
   * into dist/ next to the compiled modules, and a missing one fails at start, not at first use.
   */
  static fromFiles(files: readonly URL[], numberOfKeys: number): RedisScript {
    return new RedisScript(files.map((file) => readFileSync(file, 'utf8')).join('\n'), numberOfKeys);
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[] = []): Promise<unknown> {
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
