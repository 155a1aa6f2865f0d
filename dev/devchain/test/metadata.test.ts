import { Metadata, TypeRegistry } from '@polkadot/types';
import type { RuntimeVersion } from '@polkadot/types/interfaces';
import { buildMetadata, type RuntimeMetadata } from '../src/metadata/buildMetadata.js';

describe('synthesized runtime metadata', () => {
  let runtime: RuntimeMetadata;
  beforeAll(async () => {
    runtime = await buildMetadata();
  });

  const pallet = (name: string) => runtime.metadata.asV14.pallets.find((p) => p.name.toString() === name);

  it('has every pallet of the standalone development node at its runtime index, and no relay-chain pallet', () => {
    const expected = runtime.facts.pallets.filter((p) => p.inApiAugment && !p.absentOnStandaloneDev);
    expect(runtime.metadata.asV14.pallets.map((p) => [p.name.toString(), p.index.toNumber()])).toEqual(
      expected.map((p) => [p.name, p.index]),
    );
    expect(pallet('ParachainSystem')).toBeUndefined();
    expect(pallet('Msa')?.index.toNumber()).toBe(60);
  });

  it('gives every call of the nine Frequency pallets the call index of the runtime', () => {
    let checked = 0;
    for (const [name, expected] of Object.entries(runtime.facts.callIndices)) {
      const calls = pallet(name)?.calls.unwrap().type;
      expect([name, calls]).not.toEqual([name, undefined]);
      const variants = runtime.registry.lookup.getSiType(calls!).def.asVariant.variants;
      const actual = Object.fromEntries(variants.map((v) => [v.name.toString(), v.index.toNumber()]));
      expect([name, actual]).toEqual([name, expected]);
      checked += Object.keys(expected).length;
    }
    expect(checked).toBe(69);
  });

  it('stores Frequency pallet items under their Rust names with the recorded hashers and query kinds', () => {
    for (const [name, { items }] of Object.entries(runtime.facts.storage)) {
      const storage = pallet(name)?.storage;
      expect([name, items.length > 0 ? storage?.isSome : true]).toEqual([name, true]);
      const entries = storage?.isSome ? storage.unwrap().items : [];
      for (const item of items) {
        const entry = entries.find((e) => e.name.toString() === item.name);
        const hashers = entry?.type.isMap ? entry.type.asMap.hashers.map((h) => h.toString()) : [];
        expect([name, item.name, hashers, entry?.modifier.toString()]).toEqual([
          name,
          item.name,
          item.hashers,
          item.modifier,
        ]);
      }
    }
  });

  it('reproduces every api-augment lookup name, so createType("<LookupName>") works for clients', () => {
    const wrong = [...runtime.lookupIds].filter(([name, id]) => runtime.registry.lookup.getName(id) !== name);
    expect(wrong).toEqual([]);
    expect(runtime.lookupIds.size).toBeGreaterThan(250);
    const provider = runtime.registry.createType('PalletMsaAddProvider', {
      authorizedMsaId: 1,
      intentIds: [1, 2],
      expiration: 100,
    });
    expect(provider.toHex()).toBe('0x0100000000000000' + '08' + '0100' + '0200' + '64000000');
  });

  it('encodes calls with the bytes of the real runtime', () => {
    const { registry } = runtime;
    // msa.create: pallet 60, call 0, no arguments.
    expect(registry.createType('Call', { callIndex: [60, 0], args: {} }).toHex()).toBe('0x3c00');
    // balances.transferKeepAlive(dest = Id(0x01…), value = compact 1_000_000): pallet 10, call 3.
    const transfer = registry.createType('Call', {
      callIndex: [10, 3],
      args: { dest: { Id: `0x${'01'.repeat(32)}` }, value: 1_000_000 },
    });
    expect(transfer.toHex()).toBe(`0x0a0300${'01'.repeat(32)}02093d00`);
    // handles.claimHandle: pallet 66, call 0; frequencyTxPayment.payWithCapacityBatchAll: pallet 65, call 1.
    expect(registry.findMetaCall(Uint8Array.from([66, 0])).method).toBe('claimHandle');
    expect(registry.findMetaCall(Uint8Array.from([65, 1])).method).toBe('payWithCapacityBatchAll');
  });

  it('reports the runtime version of spec 189 and the extensions in runtime order', () => {
    const version = runtime.registry.createType<RuntimeVersion>(
      'RuntimeVersion',
      pallet('System')!.constants.find((c) => c.name.toString() === 'Version')!.value,
    );
    expect(version.specName.toString()).toBe('frequency-testnet');
    expect(version.specVersion.toNumber()).toBe(189);
    expect(version.transactionVersion.toNumber()).toBe(1);
    const extensions = runtime.metadata.asV14.extrinsic.signedExtensions.map((e) => e.identifier.toString());
    expect(extensions).toEqual(runtime.facts.transactionExtensions.map((e) => e.identifier));
    expect(extensions.slice(0, 7)).toEqual([
      'CheckNonZeroSender',
      'CheckSpecVersion',
      'CheckTxVersion',
      'CheckGenesis',
      'CheckMortality',
      'CheckNonce',
      'ChargeTransactionPayment',
    ]);
  });

  it('round-trips as V14 and V15 bytes', () => {
    for (const [bytes, version] of [
      [runtime.v14, 14],
      [runtime.v15, 15],
    ] as const) {
      const decoded = new Metadata(new TypeRegistry(), bytes);
      expect(decoded.version).toBe(version);
      expect(decoded.asLatest.pallets.length).toBe(runtime.metadata.asV14.pallets.length);
    }
  });

  it('carries the constants the real runtime showed: block weights, the batch limit, and their names', () => {
    const constant = (palletName: string, name: string) => {
      const entry = pallet(palletName)?.constants.find((c) => c.name.toString() === name);
      if (entry === undefined) return undefined;
      return runtime.registry.createType(runtime.registry.createLookupType(entry.type), entry.value).toJSON();
    };
    expect(constant('System', 'BlockWeights')).toMatchObject({
      maxBlock: { refTime: 2_000_000_000_000, proofSize: 10_485_760 },
    });
    expect(constant('Utility', 'batched_calls_limit')).toBe(10_922);
    expect(constant('Scheduler', 'MaximumWeight')).toEqual({ refTime: 600_000_000_000, proofSize: 3_145_728 });
    expect(constant('System', 'SS58Prefix')).toBe(42);
    expect(constant('CollatorSelection', 'pot_account')).toBeDefined();
  });

  it('names each guess it had to make', () => {
    expect(runtime.guesses.length).toBeGreaterThan(0);
    expect(runtime.guesses.every((guess) => /^(storage|constant|extension) /.test(guess))).toBe(true);
  });
});
