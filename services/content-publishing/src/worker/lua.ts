import { readFileSync } from 'node:fs';
import { RedisScript } from '@frequency-gateway/platform';

/**
 * A Redis script kept in a `.lua` file beside its module, read when the module loads (the build copies `.lua`
 * files into dist/ next to the compiled modules; a missing one fails at start, not at first use).
 */
export function luaScript(file: URL, numberOfKeys: number): RedisScript {
  return new RedisScript(readFileSync(file, 'utf8'), numberOfKeys);
}
