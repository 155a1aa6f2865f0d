import { dirname, join } from 'node:path';
import { toolCacheDir } from '@frequency-gateway/devstack';

/** The runtime's build cache (its cargo home, target folder and built Wasm blobs), beside the tool cache's bin. */
export function runtimeCacheDir(): string {
  return join(dirname(toolCacheDir()), 'runtime');
}
