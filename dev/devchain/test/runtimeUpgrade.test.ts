// A runtime upgrade on call: v2.0.1 (spec 189) to v2.1.0-rc2 (spec 191), whose one type change is a fifth
// PayloadLocation, OffChain.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@frequency-gateway/devstack';
import type { ApiPromise } from '@polkadot/api';
import type { Metadata } from '@polkadot/types';
import { devchainControl, startDevchain } from '../src/index.js';
import { connect, submit, type Connected } from './support/client.js';

const UNIT = 100_000_000n;
const PAYLOAD_LOCATION = 'common_primitives::schema::PayloadLocation';

/** The variant names of PayloadLocation in `metadata`. */
function payloadLocations(metadata: Metadata): string[] {
  const type = metadata.asLatest.lookup.types.find((entry) => entry.type.path.join('::') === PAYLOAD_LOCATION);
  if (!type) throw new Error(`no ${PAYLOAD_LOCATION} in the metadata`);
  return type.type.def.asVariant.variants.map((variant) => variant.name.toString());
}

const specAt = async (api: ApiPromise, hash: string) =>
  (await api.rpc.state.getRuntimeVersion(hash)).specVersion.toNumber();

describe('a runtime upgrade', () => {
  let c: Connected;
  const seal = () => c.devchain.chain.command({ createEmpty: true, finalize: true });
  const hashOf = (number: number) => c.devchain.chain.blockByNumber(number)!.hash;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  it('is enacted at the block asked: CodeUpdated there, the new version heard and served per block, LastRuntimeUpgrade next', async () => {
    await seal();
    const heard: number[] = [];
    const stop = await c.api.rpc.state.subscribeRuntimeVersion(
      (version) => void heard.push(version.specVersion.toNumber()),
    );
    expect(c.api.runtimeVersion.specVersion.toNumber()).toBe(189);
    expect(() => c.api.createType('CommonPrimitivesSchemaPayloadLocation', 'OffChain')).toThrow();

    const at = c.devchain.chain.best.number + 2;
    expect(await devchainControl(c.devchain.url).upgradeRuntime(at)).toEqual({ at, specVersion: 191 });
    await seal();
    expect(heard).toEqual([189]);
    await seal();
    expect(c.devchain.chain.best.number).toBe(at);

    // The block that enacts it emits CodeUpdated as it starts; its state holds the new runtime.
    const events = await c.api.query.system.events.at(hashOf(at));
    expect(
      events.filter(({ event }) => c.api.events.system.CodeUpdated.is(event)).map(({ phase }) => phase.type),
    ).toEqual(['Initialization']);
    await waitUntil(async () => heard.includes(191), 10_000, 'the new runtime version notified');
    await waitUntil(
      async () => c.api.runtimeVersion.specVersion.toNumber() === 191,
      10_000,
      'the client on the new runtime',
    );
    expect(heard).toEqual([189, 191]);
    expect(await specAt(c.api, hashOf(at - 1))).toBe(189);
    expect(await specAt(c.api, hashOf(at))).toBe(191);
    expect(payloadLocations(await c.api.rpc.state.getMetadata(hashOf(at - 1)))).toEqual([
      'OnChain',
      'IPFS',
      'Itemized',
      'Paginated',
    ]);
    expect(payloadLocations(await c.api.rpc.state.getMetadata(hashOf(at)))).toEqual([
      'OnChain',
      'IPFS',
      'Itemized',
      'Paginated',
      'OffChain',
    ]);
    expect(c.api.createType('CommonPrimitivesSchemaPayloadLocation', 'OffChain').toU8a()).toEqual(new Uint8Array([4]));

    // The first block the new runtime builds records the upgrade, as the executive does.
    await seal();
    const lastUpgrade = async (number: number) =>
      (await c.api.query.system.lastRuntimeUpgrade.at(hashOf(number))).unwrap().specVersion.toNumber();
    expect(await lastUpgrade(at)).toBe(189);
    expect(await lastUpgrade(at + 1)).toBe(191);
    stop();

    // Once upgraded, there is no further release to upgrade to.
    await expect(devchainControl(c.devchain.url).upgradeRuntime()).rejects.toThrow(
      'the devchain models one runtime upgrade, from spec 189 to 191 (v2.1.0-rc2); it runs spec 191',
    );
  });
});

describe('transactions across a runtime upgrade', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  it('refuses one signed for the old runtime, drops one waiting in the pool as invalid, and includes one signed after', async () => {
    const nonce = (await c.api.rpc.system.accountNextIndex(c.alice.address)).toNumber();
    // Signed for spec 189 and kept back; and one waiting in the pool behind a nonce gap.
    const early = await c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT).signAsync(c.alice, { nonce });
    const waiting = submit(c.api.tx.system.remark('behind a gap'), c.alice, { nonce: nonce + 1 });
    await waitUntil(async () => c.devchain.chain.pool.pending().length === 1, 10_000, 'the remark in the pool');

    const { at } = await devchainControl(c.devchain.url).upgradeRuntime();
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    expect(c.devchain.chain.best.number).toBe(at);
    expect((await waiting).statuses).toEqual(['Future', 'Invalid']);
    await expect(c.api.rpc.author.submitExtrinsic(early)).rejects.toThrow(
      '1010: Invalid Transaction: Transaction has a bad signature',
    );

    await waitUntil(
      async () => c.api.runtimeVersion.specVersion.toNumber() === 191,
      10_000,
      'the client on the new runtime',
    );
    const after = await submit(c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT), c.alice);
    expect(after.statuses).toContain('Finalized');
    expect(after.result.dispatchError).toBeUndefined();
  });
});

describe('a runtime upgrade and the chain around it', () => {
  it('is undone with the block that enacted it when a reorganisation retracts that block', async () => {
    const c = await connect({ finalityLag: 2 });
    try {
      const heard: number[] = [];
      const stop = await c.api.rpc.state.subscribeRuntimeVersion(
        (version) => void heard.push(version.specVersion.toNumber()),
      );
      await c.devchain.chain.command({ createEmpty: true, finalize: true });
      await c.devchain.chain.command({ createEmpty: true, finalize: true });
      await devchainControl(c.devchain.url).upgradeRuntime();
      await c.devchain.chain.command({ createEmpty: true, finalize: true });
      await waitUntil(async () => heard.includes(191), 10_000, 'the new runtime version notified');
      await devchainControl(c.devchain.url).reorg(1);
      await waitUntil(async () => heard.length === 3, 10_000, 'the old runtime version notified');
      expect(heard).toEqual([189, 191, 189]);
      expect((await c.api.rpc.state.getRuntimeVersion()).specVersion.toNumber()).toBe(189);
      stop();
    } finally {
      await c.close();
    }
  });

  it('is kept by a chain restarted from its base path, and enacted again at the same block by the replay', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'devchain-upgrade-'));
    try {
      const first = await startDevchain({ basePath: directory, upgradeRuntimeAt: 2 });
      for (let n = 0; n < 3; n++) await first.chain.command({ createEmpty: true, finalize: true });
      const hashes = [1, 2, 3].map((number) => first.chain.blockByNumber(number)!.hash);
      expect(first.chain.runtimeAt(1).facts.runtimeVersion.specVersion).toBe(189);
      expect(first.chain.runtimeAt(2).facts.runtimeVersion.specVersion).toBe(191);
      await first.close();

      const again = await startDevchain({ basePath: directory });
      try {
        expect([1, 2, 3].map((number) => again.chain.blockByNumber(number)!.hash)).toEqual(hashes);
        expect(again.chain.runtimeAt(1).facts.runtimeVersion.specVersion).toBe(189);
        expect(again.chain.runtime.facts.runtimeVersion.specVersion).toBe(191);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
