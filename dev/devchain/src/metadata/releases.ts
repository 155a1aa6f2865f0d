import type { AugmentLookup } from './apiAugment.js';
import type { RuntimeFacts } from './facts.js';

/**
 * A runtime release the devchain can upgrade to: its version, and how its types differ from the release the
 * devchain starts with (v2.0.1, spec 189), as changes to api-augment's lookup.
 */
export interface RuntimeRelease {
  /** The Frequency release, e.g. v2.1.0-rc2. */
  name: string;
  specVersion: number;
  transactionVersion: number;
  /** The release's types: the starting release's lookup with this release's changes. */
  lookup(previous: AugmentLookup): AugmentLookup;
}

/**
 * The release after v2.0.1: v2.1.0-rc2 (spec 191; `transaction_version` stays 1). Its one type change is a fifth
 * `PayloadLocation`, `OffChain` (index 4), which every use of the type carries: the Schemas calls and storage that
 * take or hold a payload location, the StatefulStorage `StatefulPagesMigrated` event and the schema runtime APIs.
 * Encodings of the four earlier locations do not change.
 */
export const NEXT_RELEASE: RuntimeRelease = {
  name: 'v2.1.0-rc2',
  specVersion: 191,
  transactionVersion: 1,
  lookup: (previous) => {
    const name = 'CommonPrimitivesSchemaPayloadLocation';
    const location = previous.definitions[name] as { _enum: string[] } | undefined;
    if (!location) throw new Error(`api-augment's lookup has no ${name}`);
    return {
      ...previous,
      definitions: { ...previous.definitions, [name]: { _enum: [...location._enum, 'OffChain'] } },
    };
  },
};

/** The facts of `release`: the starting release's, with its runtime version. */
export function factsOf(facts: RuntimeFacts, release: RuntimeRelease | undefined): RuntimeFacts {
  if (!release) return facts;
  const { specVersion, transactionVersion } = release;
  return { ...facts, runtimeVersion: { ...facts.runtimeVersion, specVersion, transactionVersion } };
}
