import type { KeyringPair } from '@polkadot/keyring/types';
import type { PalletMsaAddKeyData, PalletMsaAddProvider } from '@polkadot/types/lookup';
import { u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { jest } from '@jest/globals';
import { connect, submit, type Connected } from './support/client.js';

describe('MSA pallet through a real client', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const events = (outcome: Awaited<ReturnType<typeof submit>>) =>
    outcome.result.events.map(({ event }) => `${event.section}.${event.method}`);
  const moduleError = (outcome: Awaited<ReturnType<typeof submit>>) => {
    const error = outcome.result.dispatchError;
    if (!error?.isModule) return error?.toString();
    const meta = c.api.registry.findMetaError(error.asModule);
    return `${meta.section}.${meta.name}`;
  };
  const current = async () => (await c.api.rpc.chain.getHeader()).number.toNumber() + 1;
  const addProvider = (authorizedMsaId: number, intentIds: number[], expiration: number) =>
    c.api.createType('PalletMsaAddProvider', {
      authorizedMsaId,
      intentIds,
      expiration,
    }) as unknown as PalletMsaAddProvider;
  const signWrapped = (signer: KeyringPair, payload: { toU8a(): Uint8Array }) => ({
    Sr25519: u8aToHex(signer.sign(u8aWrapBytes(payload.toU8a()))),
  });

  it('starts with Alice as MSA 1, a registered provider', async () => {
    expect((await c.api.query.msa.publicKeyToMsaId(c.alice.address)).unwrap().toNumber()).toBe(1);
    expect((await c.api.query.msa.providerToRegistryEntryV2(1)).unwrap().defaultName.toUtf8()).toBe('alice');
    expect(moduleError(await submit(c.api.tx.msa.create(), c.alice))).toBe('msa.KeyAlreadyRegistered');
    expect(moduleError(await submit(c.api.tx.msa.createProvider('Again'), c.alice))).toBe(
      'msa.DuplicateProviderRegistryEntry',
    );
  });

  it('signs a user up with a sponsored account and delegation, and refuses the same proof twice', async () => {
    const payload = addProvider(1, [1, 2], (await current()) + 100);
    const proof = signWrapped(c.bob, payload);
    const outcome = await submit(
      c.api.tx.msa.createSponsoredAccountWithDelegation(c.bob.address, proof, payload),
      c.alice,
    );
    expect(events(outcome)).toEqual(
      expect.arrayContaining(['msa.MsaCreated', 'msa.DelegationGranted', 'system.ExtrinsicSuccess']),
    );
    const bobMsa = (await c.api.query.msa.publicKeyToMsaId(c.bob.address)).unwrap().toNumber();
    expect(bobMsa).toBe(2);
    const delegation = (await c.api.query.msa.delegatorAndProviderToDelegation(bobMsa, 1)).unwrap();
    expect(delegation.revokedAt.toNumber()).toBe(0);
    expect([...delegation.permissions.keys()].map((k) => k.toNumber())).toEqual([1, 2]);

    const replay = await submit(
      c.api.tx.msa.createSponsoredAccountWithDelegation(c.bob.address, proof, payload),
      c.alice,
    );
    expect(moduleError(replay)).toBe('msa.SignatureAlreadySubmitted');
  });

  it('rejects expired, not-yet-valid and forged payloads with the runtime errors', async () => {
    // Each payload is built for the block that will execute it (best + 1).
    const cases: Array<[(now: number) => number, KeyringPair, string]> = [
      [(now) => now - 1, c.charlie, 'msa.ProofHasExpired'],
      [(now) => now, c.charlie, 'msa.ProofHasExpired'],
      [(now) => now + 200, c.charlie, 'msa.ProofNotYetValid'],
      [(now) => now + 50, c.bob, 'msa.InvalidSignature'],
    ];
    for (const [expiration, signer, error] of cases) {
      const payload = addProvider(1, [1], expiration(await current()));
      const proof = signWrapped(signer, payload);
      const outcome = await submit(
        c.api.tx.msa.createSponsoredAccountWithDelegation(c.charlie.address, proof, payload),
        c.alice,
      );
      expect([error, moduleError(outcome)]).toEqual([error, error]);
    }
    expect((await c.api.query.msa.publicKeyToMsaId(c.charlie.address)).isNone).toBe(true);
  });

  it("adds a second key with both owners' signatures and deletes it again", async () => {
    const payload = c.api.createType<PalletMsaAddKeyData>('PalletMsaAddKeyData', {
      msaId: 2,
      expiration: (await current()) + 100,
      newPublicKey: c.charlie.address,
    });
    const added = await submit(
      c.api.tx.msa.addPublicKeyToMsa(
        c.bob.address,
        signWrapped(c.bob, payload),
        signWrapped(c.charlie, payload),
        payload,
      ),
      c.alice,
    );
    expect(events(added)).toContain('msa.PublicKeyAdded');
    expect((await c.api.query.msa.publicKeyCountForMsaId(2)).toNumber()).toBe(2);
    const deleted = await submit(c.api.tx.msa.deleteMsaPublicKey(c.charlie.address), c.bob);
    expect(events(deleted)).toContain('msa.PublicKeyDeleted');
    expect((await c.api.query.msa.publicKeyToMsaId(c.charlie.address)).isNone).toBe(true);
  });

  it('revokes a delegation for free, refuses a second revocation at the pool, then retires the MSA', async () => {
    const before = (await c.api.query.system.account(c.bob.address)).data.free.toBigInt();
    const revoked = await submit(c.api.tx.msa.revokeDelegationByDelegator(1), c.bob);
    expect(events(revoked)).toContain('msa.DelegationRevoked');
    expect((await c.api.query.system.account(c.bob.address)).data.free.toBigInt()).toBe(before);

    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(submit(c.api.tx.msa.revokeDelegationByDelegator(1), c.bob)).rejects.toThrow(
      '1010: Invalid Transaction: Custom error: 0',
    );
    logged.mockRestore();

    const retired = await submit(c.api.tx.msa.retireMsa(), c.bob);
    expect(events(retired)).toEqual(expect.arrayContaining(['msa.PublicKeyDeleted', 'msa.MsaRetired']));
    expect((await c.api.query.msa.publicKeyToMsaId(c.bob.address)).isNone).toBe(true);
  });

  it('lets the sudo key register a provider through governance, and runs batches atomically', async () => {
    await submit(c.api.tx.msa.create(), c.charlie);
    const payload = {
      defaultName: 'Governed',
      localizedNames: new Map(),
      defaultLogo250100PngCid: '',
      localizedLogo250100PngCids: new Map(),
    };
    const sudo = await submit(
      c.api.tx.sudo.sudo(c.api.tx.msa.createProviderViaGovernanceV2(c.charlie.address, payload)),
      c.alice,
    );
    expect(events(sudo)).toEqual(expect.arrayContaining(['msa.ProviderCreated', 'sudo.Sudid']));
    const notSudo = await submit(c.api.tx.sudo.sudo(c.api.tx.msa.create()), c.charlie);
    expect(moduleError(notSudo)).toBe('sudo.RequireSudo');

    // The second call fails, so the first one (a remark with event) must leave nothing behind.
    const batch = await submit(
      c.api.tx.utility.batchAll([c.api.tx.system.remarkWithEvent('hi'), c.api.tx.msa.create()]),
      c.charlie,
    );
    expect(moduleError(batch)).toBe('msa.KeyAlreadyRegistered');
    expect(events(batch)).not.toContain('system.Remarked');
    const ok = await submit(
      c.api.tx.utility.batchAll([c.api.tx.system.remarkWithEvent('a'), c.api.tx.system.remarkWithEvent('b')]),
      c.charlie,
    );
    expect(events(ok).filter((e) => e.startsWith('utility.'))).toEqual([
      'utility.ItemCompleted',
      'utility.ItemCompleted',
      'utility.BatchCompleted',
    ]);
  });
});
