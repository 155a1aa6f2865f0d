import { secret, variable, type ReadinessCheck } from '@frequency-gateway/platform';
import { z } from 'zod';
import { EmbeddedStore } from './embedded.js';
import { KuboStore } from './kubo.js';
import type { ContentStore } from './contentStore.js';

/** The content-store variables of every component that reads or writes IPFS content. */
export function storageVariables() {
  return {
    IPFS_ENDPOINT: variable(
      z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
      'Kubo RPC API of the IPFS node (`/api/v0` may be included or left out); without it IPFS_EMBEDDED_DIR is required',
      { urlWithCredentials: true, example: 'http://ipfs:5001' },
    ),
    IPFS_BASIC_AUTH_USER: variable(z.string().min(1).optional(), 'User for basic authentication to the RPC API'),
    IPFS_BASIC_AUTH_SECRET: secret(z.string().min(1).optional(), 'Password for basic authentication to the RPC API'),
    IPFS_EMBEDDED_DIR: variable(
      z.string().min(1).optional(),
      'Use the embedded content store in this folder instead of an IPFS node (one machine only: `make dev`, tests)',
    ),
    IPFS_GATEWAY_URL: variable(
      z
        .string()
        .regex(/^https?:\/\/\S+$/, 'must be an http(s) URL, with [CID] where the CID goes')
        .default('https://ipfs.io/ipfs/[CID]'),
      'Public URL of content, a template with `[CID]` (or a base URL to which /ipfs/{cid} is appended)',
    ),
  };
}

export interface StorageConfig {
  IPFS_ENDPOINT?: string | undefined;
  IPFS_BASIC_AUTH_USER?: string | undefined;
  IPFS_BASIC_AUTH_SECRET?: string | undefined;
  IPFS_EMBEDDED_DIR?: string | undefined;
}

export class StorageConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageConfigError';
  }
}

/** The content store the configuration names: Kubo at IPFS_ENDPOINT, or the embedded store. */
export function openContentStore(config: StorageConfig): ContentStore {
  if (config.IPFS_ENDPOINT) {
    const url = config.IPFS_ENDPOINT.replace(/\/api\/v0\/?$/, '');
    const { IPFS_BASIC_AUTH_USER: username, IPFS_BASIC_AUTH_SECRET: password } = config;
    if ((username === undefined) !== (password === undefined))
      throw new StorageConfigError('IPFS_BASIC_AUTH_USER and IPFS_BASIC_AUTH_SECRET go together');
    return new KuboStore({ url, ...(username && password ? { basicAuth: { username, password } } : {}) });
  }
  if (config.IPFS_EMBEDDED_DIR) return new EmbeddedStore(config.IPFS_EMBEDDED_DIR);
  throw new StorageConfigError('set IPFS_ENDPOINT (a Kubo RPC API), or IPFS_EMBEDDED_DIR for the embedded store');
}

/** The readiness check of a content store (required: nothing is published without it). */
export function contentStoreCheck(store: ContentStore): ReadinessCheck {
  return { name: 'ipfs', target: store.target, probe: (signal) => store.probe(signal) };
}
