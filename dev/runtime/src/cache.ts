import { homedir } from 'node:os';
import { join } from 'node:path';

/** The runtime's build cache (its cargo home, target folder and built Wasm blobs): `$XDG_CACHE_HOME/frequency-gateway/runtime`. */
export function runtimeCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'frequency-gateway', 'runtime');
}
