import { buildMetadata } from '@frequency-gateway/devchain';
import { Metadata, TypeRegistry } from '@polkadot/types';
import { builtRuntime } from '../src/build.js';
import { metadataDifferences } from '../src/metadataDiff.js';
import { readWasm, runtimeMetadata } from '../src/runtimeCalls.js';

describe("the devchain's metadata against the real runtime's", () => {
  let differences: string[];

  beforeAll(async () => {
    const built = builtRuntime();
    const real = await runtimeMetadata(readWasm(built.wasm));
    const devchain = await buildMetadata();
    differences = metadataDifferences(real, new Metadata(new TypeRegistry(), devchain.v15));
  }, 120_000);

  // Every value the devchain's facts guess (storage hashers, constants, runtime API versions in System.Version)
  // is compared here.
  it('differs in nothing a client relies on', () => {
    expect(differences).toEqual([]);
  });
});
