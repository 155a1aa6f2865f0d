import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '@frequency-gateway/platform';
import {
  EmbeddedStore,
  KuboStore,
  StorageConfigError,
  contentStoreCheck,
  openContentStore,
  storageVariables,
} from '../src/index.js';

describe('content store configuration', () => {
  it('opens Kubo at IPFS_ENDPOINT (with or without /api/v0) and hides credentials from the target', () => {
    const store = openContentStore({
      IPFS_ENDPOINT: 'http://ipfs:5001/api/v0',
      IPFS_BASIC_AUTH_USER: 'gateway',
      IPFS_BASIC_AUTH_SECRET: 'hunter2',
    });
    expect(store).toBeInstanceOf(KuboStore);
    expect(store.target).toBe('http://ipfs:5001');
    expect(contentStoreCheck(store)).toMatchObject({ name: 'ipfs', target: 'http://ipfs:5001' });
    expect(() => openContentStore({ IPFS_ENDPOINT: 'http://ipfs:5001', IPFS_BASIC_AUTH_USER: 'only-user' })).toThrow(
      StorageConfigError,
    );
  });

  it('opens the embedded store in IPFS_EMBEDDED_DIR, and refuses a configuration with neither', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storage-config-'));
    try {
      const store = openContentStore({ IPFS_EMBEDDED_DIR: dir });
      expect(store).toBeInstanceOf(EmbeddedStore);
      await expect(contentStoreCheck(store).probe(AbortSignal.timeout(1000))).resolves.toBeUndefined();
      await store.close?.();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => openContentStore({})).toThrow('set IPFS_ENDPOINT');
  });

  it('validates the variables and defaults the gateway template', () => {
    const config = parseConfig(storageVariables(), { IPFS_EMBEDDED_DIR: '/tmp/x' });
    expect(config.IPFS_GATEWAY_URL).toBe('https://ipfs.io/ipfs/[CID]');
    expect(() => parseConfig(storageVariables(), { IPFS_ENDPOINT: 'ftp://ipfs' })).toThrow(/IPFS_ENDPOINT/);
  });
});
