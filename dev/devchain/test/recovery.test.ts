import { jest } from '@jest/globals';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { PalletMsaAddKeyData, PalletMsaRecoveryCommitmentPayload } from '@polkadot/types/lookup';
import { hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import { keccakAsU8a } from '@polkadot/util-crypto';
import { getAddress } from 'viem';
import { ethereumAccountId } from '@frequency-gateway/chain';
import {
  connect,
  eventNames,
  moduleError,
  nextBlock,
  signPayload,
  sponsor,
  submit,
  type Connected,
} from './support/client.js';

/** Recovery commitments (what a SIWF sign-up can carry) and account recovery; the MSA's own Ethereum address. */
describe('MSA recovery and Ethereum addresses', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const hashA = keccakAsU8a('secret');
  const hashB = keccakAsU8a('secret+contact');
  const commitment = u8aToHex(keccakAsU8a(u8aConcat(hashA, hashB)));

  const commitmentPayload = async (value: string) =>
    c.api.createType('PalletMsaRecoveryCommitmentPayload', {
      recoveryCommitment: value,
      expiration: (await nextBlock(c.api)) + 50,
    }) as unknown as PalletMsaRecoveryCommitmentPayload;

  const addKeyData = async (msaId: number, newKey: KeyringPair) =>
    c.api.createType('PalletMsaAddKeyData', {
      msaId,
      expiration: (await nextBlock(c.api)) + 50,
      newPublicKey: newKey.address,
    }) as unknown as PalletMsaAddKeyData;

  it('stores a recovery commitment the MSA owner signed, paid with Capacity, and refuses a forged one', async () => {
    const dave = c.pair('Dave');
    const msaId = await sponsor(c.api, c.alice, dave);
    const payload = await commitmentPayload(commitment);
    const forged = await submit(
      c.api.tx.frequencyTxPayment.payWithCapacity(
        c.api.tx.msa.addRecoveryCommitment(dave.address, signPayload(c.bob, payload), payload),
      ),
      c.alice,
    );
    expect(moduleError(c.api, forged)).toBe('msa.InvalidSignature');
    const outcome = await submit(
      c.api.tx.frequencyTxPayment.payWithCapacity(
        c.api.tx.msa.addRecoveryCommitment(dave.address, signPayload(dave, payload), payload),
      ),
      c.alice,
    );
    expect(eventNames(outcome)).toEqual(
      expect.arrayContaining(['capacity.CapacityWithdrawn', 'msa.RecoveryCommitmentAdded']),
    );
    expect((await c.api.query.msa.msaIdToRecoveryCommitment(msaId)).unwrap().toHex()).toBe(commitment);
  });

  it('recovers an account once through an approved recovery provider with the right intermediary hashes', async () => {
    const eve = c.pair('Eve');
    const ferdie = c.pair('Ferdie');
    const msaId = await sponsor(c.api, c.alice, eve);
    const payload = await commitmentPayload(commitment);
    await submit(c.api.tx.msa.addRecoveryCommitment(eve.address, signPayload(eve, payload), payload), c.alice);

    const newKeyData = await addKeyData(msaId, ferdie);
    const recover = (a: Uint8Array, data = newKeyData, key = ferdie) =>
      c.api.tx.msa.recoverAccount(a, hashB, signPayload(key, data), data);
    expect(moduleError(c.api, await submit(recover(hashA), c.alice))).toBe('msa.NotAuthorizedRecoveryProvider');
    expect(eventNames(await submit(c.api.tx.msa.approveRecoveryProvider(c.alice.address), c.alice))).toContain(
      'msa.RecoveryProviderApproved',
    );
    expect(moduleError(c.api, await submit(recover(hashB), c.alice))).toBe('msa.InvalidRecoveryCommitment');

    const recovered = await submit(recover(hashA), c.alice);
    expect(eventNames(recovered)).toEqual(
      expect.arrayContaining(['msa.PublicKeyAdded', 'msa.AccountRecovered', 'msa.RecoveryCommitmentInvalidated']),
    );
    expect((await c.api.query.msa.publicKeyToMsaId(ferdie.address)).unwrap().toNumber()).toBe(msaId);
    expect((await c.api.query.msa.msaIdToRecoveryCommitment(msaId)).isNone).toBe(true);
    // Single use: the commitment is gone.
    const again = await submit(recover(hashA, await addKeyData(msaId, c.charlie), c.charlie), c.alice);
    expect(moduleError(c.api, again)).toBe('msa.NoRecoveryCommitment');
  });

  it("derives each MSA's Ethereum address as the runtime does (its test vectors) and validates it", async () => {
    const address = await c.api.call.msaRuntimeApi.getEthereumAddressForMsaId(1234);
    expect(address.accountId.toHex()).toBe('0x65928b9a88db189eea76f72d86128af834d64c32');
    // EIP-55 as viem, an independent implementation, writes it.
    expect(address.accountIdChecksummed.toString()).toBe(getAddress('0x65928b9a88db189eea76f72d86128af834d64c32'));
    expect((await c.api.call.msaRuntimeApi.validateEthAddressForMsa(address.accountId, 1234)).isTrue).toBe(true);
    expect((await c.api.call.msaRuntimeApi.validateEthAddressForMsa(address.accountId, 4321)).isTrue).toBe(false);
    const beyondSafeIntegers = await c.api.call.msaRuntimeApi.getEthereumAddressForMsaId(2n ** 60n);
    expect(beyondSafeIntegers.accountId.toHex()).not.toBe(address.accountId.toHex());
  });

  it('refuses to retire an MSA while its Ethereum address holds tokens (Custom 11)', async () => {
    const user = c.pair('Charlie');
    await submit(c.api.tx.msa.create(), user);
    const msaId = (await c.api.query.msa.publicKeyToMsaId(user.address)).unwrap().toNumber();
    const { accountId } = await c.api.call.msaRuntimeApi.getEthereumAddressForMsaId(msaId);
    await submit(
      c.api.tx.balances.transferKeepAlive(u8aToHex(ethereumAccountId(hexToU8a(accountId.toHex()))), 10n ** 8n),
      c.alice,
    );
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(submit(c.api.tx.msa.retireMsa(), user)).rejects.toThrow('Custom error: 11');
    silenced.mockRestore();
  });

  it('answers NotMsaOwner for an AddKeyData naming an MSA id beyond 2^53 instead of failing inside', async () => {
    const bob = c.bob;
    const msaId = await sponsor(c.api, c.alice, bob);
    const data = c.api.createType('PalletMsaAddKeyData', {
      msaId: 2n ** 63n + 5n,
      expiration: (await nextBlock(c.api)) + 50,
      newPublicKey: c.pair('Ferdie').address,
    }) as unknown as PalletMsaAddKeyData;
    const outcome = await submit(
      c.api.tx.msa.addPublicKeyToMsa(bob.address, signPayload(bob, data), signPayload(c.pair('Ferdie'), data), data),
      c.alice,
    );
    expect(msaId).toBeGreaterThan(1);
    expect(moduleError(c.api, outcome)).toBe('msa.NotMsaOwner');
  });
});
