import { jest } from '@jest/globals';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { PalletMsaAddKeyData, PalletMsaAddProvider } from '@polkadot/types/lookup';
import { hexToU8a, u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { privateKeyToAccount } from 'viem/accounts';
import { ethereumAccountId } from '@frequency-gateway/chain';
import { connect, moduleError, submit, type Connected } from './support/client.js';

describe('Capacity and paying with it', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const names = (outcome: Awaited<ReturnType<typeof submit>>) =>
    outcome.result.events.map(({ event }) => `${event.section}.${event.method}`);
  const ledger = async (msaId: number) => (await c.api.query.capacity.capacityLedger(msaId)).unwrap();
  const current = async () => (await c.api.rpc.chain.getHeader()).number.toNumber() + 1;
  const signUp = async (user: KeyringPair) => {
    const payload = c.api.createType('PalletMsaAddProvider', {
      authorizedMsaId: 1,
      intentIds: [1],
      expiration: (await current()) + 100,
    }) as unknown as PalletMsaAddProvider;
    const proof = { Sr25519: u8aToHex(user.sign(u8aWrapBytes(payload.toU8a()))) };
    return c.api.tx.msa.createSponsoredAccountWithDelegation(user.address, proof, payload);
  };
  // polkadot-js logs each rejected submission (sometimes after the promise settles); here they are expected.
  const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  afterAll(() => logged.mockRestore());
  const rejected = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: Error) => error.message,
    );

  it("stakes Alice's tokens for her provider MSA at genesis: 2 % of the stake becomes Capacity", async () => {
    const details = await ledger(1);
    expect(details.totalTokensStaked.toBigInt()).toBe(2_000_000_000_000_000n);
    expect(details.totalCapacityIssued.toBigInt()).toBe(40_000_000_000_000n);
    expect(details.remainingCapacity.toBigInt()).toBe(40_000_000_000_000n);
    expect((await c.api.query.system.account(c.alice.address)).data.frozen.toBigInt()).toBe(2_000_000_000_000_000n);
    expect((await c.api.query.capacity.epochLength()).toNumber()).toBe(100);
  });

  it('pays a sponsored sign-up batch with Capacity instead of tokens', async () => {
    const tokensBefore = (await c.api.query.system.account(c.alice.address)).data.free.toBigInt();
    const capacityBefore = (await ledger(1)).remainingCapacity.toBigInt();
    const outcome = await submit(c.api.tx.frequencyTxPayment.payWithCapacityBatchAll([await signUp(c.bob)]), c.alice);
    const events = names(outcome);
    expect(events).toEqual([
      'capacity.CapacityWithdrawn',
      'msa.MsaCreated',
      'msa.DelegationGranted',
      'utility.ItemCompleted',
      'utility.BatchCompleted',
      'system.ExtrinsicSuccess',
    ]);
    const withdrawn = outcome.result.events
      .find(({ event }) => event.method === 'CapacityWithdrawn')!
      .event.data[1]!.toString();
    expect((await ledger(1)).remainingCapacity.toBigInt()).toBe(capacityBefore - BigInt(withdrawn));
    expect((await c.api.query.system.account(c.alice.address)).data.free.toBigInt()).toBe(tokensBefore);
  });

  it("charges the real runtime's Capacity fee for a provider's IPFS message", async () => {
    const call = c.api.tx.messages.addIpfsMessage(
      17,
      'bafkreidgvpkjawlxz6sffxzwgooowe5yt7i6wsyg236mfoks77nywkptdq',
      1_234,
    );
    const outcome = await submit(c.api.tx.frequencyTxPayment.payWithCapacity(call), c.alice);
    const withdrawn = outcome.result.events.find(({ event }) => event.method === 'CapacityWithdrawn')!.event;
    // What Frequency v2.0.1's runtime withdrew for the same transaction (make test-runtime): its WeightToFee rounds a
    // Perbill coefficient's product to the nearest planck.
    expect(BigInt(withdrawn.data[1]!.toString())).toBe(2_164_711n);
  });

  it('refuses ineligible calls, keys without an MSA, and batches over ten calls', async () => {
    const ineligible = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.balances.transferKeepAlive(c.bob.address, 1_000_000n),
    );
    expect(await rejected(submit(ineligible, c.alice))).toBe('1010: Invalid Transaction: Custom error: 0');
    const noMsa = c.api.tx.frequencyTxPayment.payWithCapacity(await signUp(c.bob));
    expect(await rejected(submit(noMsa, c.charlie))).toBe('1010: Invalid Transaction: Custom error: 1');
    const eleven = await Promise.all(Array.from({ length: 11 }, () => signUp(c.charlie)));
    const tooMany = await submit(c.api.tx.frequencyTxPayment.payWithCapacityBatchAll(eleven), c.alice);
    const error = c.api.registry.findMetaError(tooMany.result.dispatchError!.asModule);
    expect(`${error.section}.${error.name}`).toBe('frequencyTxPayment.BatchedCallAmountExceedsMaximum');
  });

  it('stakes for a new provider and refuses a fee larger than its Capacity', async () => {
    await submit(c.api.tx.msa.create(), c.charlie);
    await submit(c.api.tx.msa.createProvider('charlie'), c.charlie);
    const staked = await submit(c.api.tx.capacity.stake(3, 1_000_000n), c.charlie);
    expect(names(staked)).toContain('capacity.Staked');
    expect((await ledger(3)).totalCapacityIssued.toBigInt()).toBe(20_000n);
    const tooBig = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.msa.grantDelegation(
        c.bob.address,
        { Sr25519: `0x${'00'.repeat(64)}` },
        { authorizedMsaId: 3, intentIds: [], expiration: 1 },
      ),
    );
    // The node answers "Inability to pay some fees (e.g. account balance too low)"; polkadot-js reformats it.
    expect(await rejected(submit(tooBig, c.charlie))).toBe(
      '1010: Invalid Transaction: Inability to pay some fees , e.g. account balance too low',
    );
  });

  it('unstakes part of a stake (Capacity shrinks in proportion), then all of it, and withdraws once thawed', async () => {
    await submit(c.api.tx.capacity.stake(3, 4_000_000n), c.charlie);
    const before = await ledger(3);
    expect(before.totalTokensStaked.toBigInt()).toBe(5_000_000n);
    const partial = await submit(c.api.tx.capacity.unstake(3, 2_000_000n), c.charlie);
    const unstaked = partial.result.events.find(({ event }) => event.method === 'UnStaked')!.event;
    // ceil(2,000,000 / 5,000,000 × 100,000) = 40,000 Capacity.
    expect(unstaked.data.map(String).slice(2)).toEqual(['2000000', '40000']);
    expect((await ledger(3)).totalCapacityIssued.toBigInt()).toBe(60_000n);
    expect(moduleError(c.api, await submit(c.api.tx.capacity.unstake(3, 9_000_000n), c.charlie))).toBe(
      'capacity.InsufficientStakingBalance',
    );
    expect(moduleError(c.api, await submit(c.api.tx.capacity.withdrawUnstaked(), c.charlie))).toBe(
      'capacity.NoThawedTokenAvailable',
    );
    await submit(c.api.tx.capacity.unstake(3, 3_000_000n), c.charlie);
    expect((await ledger(3)).totalCapacityIssued.toBigInt()).toBe(0n);
    expect((await c.api.query.capacity.unstakeUnlocks(c.charlie.address)).unwrap().length).toBe(2);

    // Two epochs of thawing: shorten the epochs through sudo and let blocks pass.
    await submit(c.api.tx.sudo.sudo(c.api.tx.capacity.setEpochLength(1)), c.alice);
    for (let i = 0; i < 4; i++) await submit(c.api.tx.system.remark('tick'), c.alice);
    const frozenBefore = (await c.api.query.system.account(c.charlie.address)).data.frozen.toBigInt();
    const withdrawn = await submit(c.api.tx.capacity.withdrawUnstaked(), c.charlie);
    expect(names(withdrawn)).toContain('capacity.StakeWithdrawn');
    const frozenAfter = (await c.api.query.system.account(c.charlie.address)).data.frozen.toBigInt();
    expect(frozenBefore - frozenAfter).toBe(5_000_000n);
  });

  it('charges 30 % for adding an Ethereum key to a one-key MSA, the full fee for the next one', async () => {
    const user = c.pair('Dave');
    await submit(await signUp(user), c.alice);
    const msaId = (await c.api.query.msa.publicKeyToMsaId(user.address)).unwrap().toNumber();
    const addEthereumKey = async (privateKey: `0x${string}`) => {
      const wallet = privateKeyToAccount(privateKey);
      const data = c.api.createType('PalletMsaAddKeyData', {
        msaId,
        expiration: (await current()) + 100,
        newPublicKey: u8aToHex(ethereumAccountId(hexToU8a(wallet.address))),
      }) as unknown as PalletMsaAddKeyData;
      const ownerProof = { Sr25519: u8aToHex(user.sign(u8aWrapBytes(data.toU8a()))) };
      const keyProof = { Ecdsa: await wallet.signMessage({ message: { raw: data.toU8a() } }) };
      const outcome = await submit(
        c.api.tx.frequencyTxPayment.payWithCapacity(
          c.api.tx.msa.addPublicKeyToMsa(user.address, ownerProof, keyProof, data),
        ),
        c.alice,
      );
      expect(names(outcome)).toContain('msa.PublicKeyAdded');
      const withdrawn = outcome.result.events.find(({ event }) => event.method === 'CapacityWithdrawn')!.event;
      return BigInt(withdrawn.data[1]!.toString());
    };
    const second = await addEthereumKey(`0x${'11'.repeat(32)}`);
    const third = await addEthereumKey(`0x${'22'.repeat(32)}`);
    // Same length, same call: the subsidized one costs 30 % of the full fee (rounded).
    expect(second * 10n).toBeGreaterThanOrEqual(third * 3n - 10n);
    expect(second * 10n).toBeLessThanOrEqual(third * 3n + 10n);
  });

  it('refuses an MSA that never staked for payment, as the node does (not Custom 2)', async () => {
    await submit(c.api.tx.msa.create(), c.pair('Eve'));
    const unstaked = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.msa.grantDelegation(
        c.bob.address,
        { Sr25519: `0x${'00'.repeat(64)}` },
        { authorizedMsaId: 9, intentIds: [], expiration: 1 },
      ),
    );
    expect(await rejected(submit(unstaked, c.pair('Eve')))).toBe(
      '1010: Invalid Transaction: Inability to pay some fees , e.g. account balance too low',
    );
  });

  it("prices weight with the runtime's WeightToFee (ExtrinsicBaseWeight costs 0.1 CENT)", async () => {
    const fee = await c.api.call.transactionPaymentApi.queryWeightToFee({ refTime: 101_017_000n, proofSize: 0 });
    expect(fee.toBigInt()).toBe(100_000n);
    const double = await c.api.call.transactionPaymentApi.queryWeightToFee({ refTime: 202_034_000n, proofSize: 0 });
    expect(double.toBigInt()).toBe(200_000n);
  });
});
