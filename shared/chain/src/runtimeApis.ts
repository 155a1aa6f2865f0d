import { options as frequencyOptions } from '@frequency-chain/api-augment';
import type { Logger } from '@frequency-gateway/platform';
import type { ApiPromise } from '@polkadot/api';
import { Metadata } from '@polkadot/types';
import { u8aToHex } from '@polkadot/util';

/** How long the api may take to load a new runtime's metadata after the node announced the runtime. */
const LOAD_WITHIN_MS = 30_000;

/**
 * Keeps the api's runtime APIs (`api.call`) across runtime upgrades. A fresh api reads the runtime APIs from the
 * runtime's metadata v15; after an upgrade, polkadot-js loads the new runtime's metadata v14, which has none, and
 * decorates `api.call` from the definitions it knows: only Substrate's own, for api-augment describes Frequency's
 * runtime APIs through the metadata alone. `api.call.schemasRuntimeApi`, `msaRuntimeApi`, `handlesRuntimeApi`,
 * `messagesRuntimeApi`… would be gone until the process restarts. Here, once the api has taken the upgrade, the new
 * runtime's metadata v15 is loaded and the api decorated with it, as a fresh api would be. Resolves with the
 * unsubscribe function once subscribed.
 */
export async function keepRuntimeApis(api: ApiPromise, logger?: Pick<Logger, 'info' | 'warn'>): Promise<() => void> {
  let decorated = api.runtimeVersion.specVersion.toNumber();
  let queue = Promise.resolve();
  return api.rpc.state.subscribeRuntimeVersion((version) => {
    const spec = version.specVersion.toNumber();
    queue = queue.then(async () => {
      if (spec === decorated) return;
      try {
        const apis = await decorateFromMetadataV15(api, spec);
        decorated = spec;
        logger?.info({ specVersion: spec, runtimeApis: apis }, `the chain runs spec ${spec}: runtime APIs loaded`);
      } catch (error) {
        logger?.warn(
          { specVersion: spec, error: error instanceof Error ? error.message : String(error) },
          `the chain runs spec ${spec}, and its runtime APIs could not be loaded`,
        );
      }
    });
  }) as unknown as Promise<() => void>;
}

/** Waits for the api to take runtime `spec`, then decorates it from that runtime's metadata v15; answers the APIs. */
async function decorateFromMetadataV15(api: ApiPromise, spec: number): Promise<number> {
  const until = Date.now() + LOAD_WITHIN_MS;
  while (api.runtimeVersion.specVersion.toNumber() !== spec) {
    if (Date.now() > until) throw new Error(`the api did not load spec ${spec} within ${LOAD_WITHIN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { registry } = api;
  const bytes = await api.rpc.state.call(
    'Metadata_metadata_at_version',
    u8aToHex(registry.createType('u32', 15).toU8a()),
  );
  const opaque = registry.createType('Option<OpaqueMetadata>', bytes).unwrapOr(null);
  if (!opaque) throw new Error('the runtime has no metadata v15');
  const metadata = new Metadata(registry, opaque.toHex());
  registry.setMetadata(metadata, undefined, { ...frequencyOptions.signedExtensions }, true);
  api.injectMetadata(metadata, true, registry);
  return metadata.asLatest.apis.length;
}
