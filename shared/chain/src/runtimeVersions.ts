import type { RuntimeVersion } from '@polkadot/types/interfaces';

/**
 * The two versions a transaction's signed payload carries (`CheckSpecVersion`, `CheckTxVersion`): a signature
 * holds only under the runtime it was made for. Spec versions only grow from one runtime to the next.
 */
export interface RuntimeVersions {
  specVersion: number;
  transactionVersion: number;
}

export const runtimeVersions = (version: RuntimeVersion): RuntimeVersions => ({
  specVersion: version.specVersion.toNumber(),
  transactionVersion: version.transactionVersion.toNumber(),
});

export const sameRuntime = (a: RuntimeVersions, b: RuntimeVersions): boolean =>
  a.specVersion === b.specVersion && a.transactionVersion === b.transactionVersion;
