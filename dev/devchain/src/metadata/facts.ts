import { readFileSync } from 'node:fs';

/**
 * Facts about the Frequency runtime (v2.0.1, spec 189) that the published type definitions do not carry:
 * pallet indices, storage hashers, call indices, constants, transaction extensions, runtime API versions
 * and the development genesis. Entries under `guessed` are not from the Frequency source and are reported
 * as guesses wherever they are used.
 */
export const FACTS_FILE = new URL('../../runtime/frequency-runtime-v2.0.1.json', import.meta.url);

export interface PalletFact {
  name: string;
  index: number;
  crate: string;
  inApiAugment: boolean;
  frequencyPallet: boolean;
  absentOnStandaloneDev?: boolean;
}

export interface StorageItemFact {
  name: string;
  apiName: string;
  hashers: string[];
  keys: string[];
  value: string;
  modifier: 'Optional' | 'Default';
  default?: unknown;
}

export interface ConstantFact {
  type: string;
  value: unknown;
}

export interface ExtensionFact {
  identifier: string;
  lookupType: string | null;
  explicit: string;
  implicit: string;
  position: number;
}

export interface RuntimeApiFact {
  name: string;
  version: number | null;
  /** Method names (snake_case) in the runtime's declaration order. */
  methods: string[];
  absentOnStandaloneDev?: boolean;
}

export interface RuntimeFacts {
  runtimeVersion: {
    specName: string;
    implName: string;
    authoringVersion: number;
    specVersion: number;
    implVersion: number;
    transactionVersion: number;
    systemVersion: number;
  };
  chain: {
    ss58Prefix: number;
    tokenSymbol: string;
    tokenDecimals: number;
    blockTimeMs: number;
    eip712ChainId: number;
    devChainSpec: { name: string; id: string; chainType: string; properties: Record<string, unknown> };
  };
  pallets: PalletFact[];
  transactionExtensions: ExtensionFact[];
  storage: Record<string, { items: StorageItemFact[] }>;
  callIndices: Record<string, Record<string, number>>;
  constants: Record<string, Record<string, ConstantFact>>;
  payloadExpiry: Record<string, { windowBlocks: number; checkOrder: string[] }>;
  runtimeApis: RuntimeApiFact[];
  devGenesis: Record<string, unknown>;
  guessed: {
    storageHashers: { items: Record<string, string[]> };
    runtimeApiVersions: { versions: Record<string, number> };
    constants: Record<string, Record<string, ConstantFact>>;
    u8aFixedLength: { value: number };
  };
}

let cached: RuntimeFacts | undefined;

export function loadFacts(): RuntimeFacts {
  cached ??= JSON.parse(readFileSync(FACTS_FILE, 'utf8')) as RuntimeFacts;
  return cached;
}

/** Pallets of the standalone development node: those in the api-augment build, without relay-chain pallets. */
export function devPallets(facts: RuntimeFacts): PalletFact[] {
  return facts.pallets.filter((pallet) => pallet.inApiAugment && !pallet.absentOnStandaloneDev);
}

/** Runtime API versions: from the Frequency source where recorded, else the labelled guesses. */
export function runtimeApiVersions(facts: RuntimeFacts): Array<[string, number]> {
  return facts.runtimeApis
    .filter((api) => !api.absentOnStandaloneDev)
    .map((api) => {
      const version = api.version ?? facts.guessed.runtimeApiVersions.versions[api.name];
      if (version === undefined) throw new Error(`no version recorded or guessed for runtime API ${api.name}`);
      return [api.name, version];
    });
}
