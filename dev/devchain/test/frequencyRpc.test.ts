import { jest } from '@jest/globals';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { PalletMsaAddProvider } from '@polkadot/types/lookup';
import { u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { connect, submit, type Connected } from './support/client.js';

describe('Frequency RPC methods the gateway calls', () => {
  let c: Connected;
  let signedUpAt: number;
  beforeAll(async () => {
    c = await connect();
    const payload = c.api.createType('PalletMsaAddProvider', {
      authorizedMsaId: 1,
      intentIds: [2, 17],
      expiration: (await c.api.rpc.chain.getHeader()).number.toNumber() + 100,
    }) as unknown as PalletMsaAddProvider;
    const proof = { Sr25519: u8aToHex((c.bob as KeyringPair).sign(u8aWrapBytes(payload.toU8a()))) };
    const tx = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.msa.createSponsoredAccountWithDelegation(c.bob.address, proof, payload),
    );
    const { result } = await submit(tx, c.alice);
    signedUpAt = (await c.api.rpc.chain.getHeader(result.status.asFinalized)).number.toNumber();
  });
  afterAll(async () => c.close());

  it('msa_checkDelegations answers per delegator, per intent and per block', async () => {
    const best = (await c.api.rpc.chain.getHeader()).number.toNumber();
    const all = await c.api.rpc.msa.checkDelegations([2, 3], 1, best, null);
    expect(all.map(([id, ok]) => [id.toNumber(), ok.isTrue])).toEqual([
      [2, true],
      [3, false],
    ]);
    const granted = await c.api.rpc.msa.checkDelegations([2], 1, best, 17);
    const notGranted = await c.api.rpc.msa.checkDelegations([2], 1, best, 5);
    expect([granted[0]![1].isTrue, notGranted[0]![1].isTrue]).toEqual([true, false]);
    const future = await c.api.rpc.msa.checkDelegations([2], 1, best + 10, null);
    expect(future[0]![1].isTrue).toBe(false);
    expect(signedUpAt).toBeLessThanOrEqual(best);
  });

  it('msa_getKeysByMsaId lists the keys of an MSA from finalized state', async () => {
    const keys = await c.api.rpc.msa.getKeysByMsaId(2);
    expect(keys.unwrap().msa_keys.map((key: { toString(): string }) => key.toString())).toEqual([c.bob.address]);
    expect((await c.api.rpc.msa.getKeysByMsaId(999)).isNone).toBe(true);
  });

  it('frequencyTxPayment_computeCapacityFeeDetails predicts what the chain withdraws', async () => {
    const tx = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.messages.addIpfsMessage(17, 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', 10),
    );
    await tx.signAsync(c.alice);
    const details = await c.api.rpc.frequencyTxPayment.computeCapacityFeeDetails(tx.toHex(), null);
    const fee = details.inclusionFee.unwrap();
    const predicted = fee.baseFee.toBigInt() + fee.lenFee.toBigInt() + fee.adjustedWeightFee.toBigInt();
    const withdrawn = await new Promise<bigint>((resolve) => {
      const unsubscribe = tx.send((result) => {
        if (!result.status.isFinalized) return;
        void unsubscribe.then((stop) => stop());
        const event = result.events.find(({ event }) => event.method === 'CapacityWithdrawn');
        resolve(BigInt(event!.event.data[1]!.toString()));
      });
    });
    expect(withdrawn).toBe(predicted);
    const tokenPaid = await c.api.rpc.frequencyTxPayment.computeCapacityFeeDetails(c.api.tx.msa.create().toHex(), null);
    expect(tokenPaid.inclusionFee.isNone).toBe(true);
  });

  it('schemas_getBySchemaId and messages_getByIntentId answer with the node JSON shapes', async () => {
    const schema = await c.api.rpc.schemas.getBySchemaId(7);
    const value = schema.unwrap();
    expect(value.payload_location.toString()).toBe('Itemized');
    expect(JSON.parse(value.model.toUtf8()).name).toBe('PublicKey');
    const best = (await c.api.rpc.chain.getHeader()).number.toNumber();
    const page = await c.api.rpc.messages.getByIntentId(17, {
      from_block: 0,
      from_index: 0,
      to_block: best + 1,
      page_size: 10,
    });
    expect(page.content.map((m: { cid: { unwrap(): { toUtf8(): string } } }) => m.cid.unwrap().toUtf8())).toEqual([
      'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
    ]);
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(
      c.api.rpc.messages.getByIntentId(17, { from_block: 5, from_index: 0, to_block: 5, page_size: 10 }),
    ).rejects.toThrow('InvalidPaginationRequest');
    silenced.mockRestore();
  });

  it('msa_grantedSchemaIdsByMsaId and msa_getAllGrantedDelegationsByMsaId answer with the deprecated JSON shapes', async () => {
    const http = async (method: string, params: unknown[]) =>
      (
        (await (
          await fetch(c.devchain.httpUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          })
        ).json()) as { result: unknown }
      ).result;
    const grant = (id: number) => ({ schema_id: id, granted_id: id, revoked_at: 0, explicit_revoked_at: 0 });
    expect(await http('msa_grantedSchemaIdsByMsaId', [2, 1])).toEqual([grant(2), grant(17)]);
    expect(await http('msa_grantedSchemaIdsByMsaId', [2, 9])).toBeNull();
    expect(await http('msa_getAllGrantedDelegationsByMsaId', [2])).toEqual([
      { provider_id: 1, permissions: [grant(2), grant(17)], revoked_at: 0 },
    ]);
    const decoded = await c.api.rpc.msa.grantedSchemaIdsByMsaId(2, 1);
    expect(decoded.unwrap().map((g) => g.schema_id.toNumber())).toEqual([2, 17]);
  });

  it("frequency_getEvents lists a block's events as phase, pallet and event index and SCALE data", async () => {
    const { result } = await submit(c.api.tx.balances.transferKeepAlive(c.charlie.address, 123_456_789n), c.alice);
    const events = await c.api.rpc.frequency.getEvents(result.status.asFinalized);
    const transfer = events.find((e) => e.pallet.toNumber() === 10 && e.event.toNumber() === 2);
    expect(transfer?.phase.unwrap().toNumber()).toBe(1);
    const data = c.api.createType('(AccountId32, AccountId32, u128)', transfer?.data.toU8a(true)) as unknown as [
      { toString(): string },
      { toString(): string },
      { toBigInt(): bigint },
    ];
    expect(data[1].toString()).toBe(c.charlie.address);
    expect(data[2].toBigInt()).toBe(123_456_789n);
    expect(events.some((e) => e.phase.isNone)).toBe(false);
  });

  it('frequency_getMissingNonceValues names the nonces missing before future transactions in the pool', async () => {
    const nonce = (await c.api.rpc.system.accountNextIndex(c.charlie.address)).toNumber();
    for (const gap of [2, 5]) {
      await c.api.tx.system.remark(`gap ${gap}`).signAndSend(c.charlie, { nonce: nonce + gap }, () => undefined);
    }
    const missing = await c.api.rpc.frequency.getMissingNonceValues(c.charlie.address);
    expect(missing.map((n) => n.toNumber())).toEqual([nonce, nonce + 1, nonce + 3, nonce + 4]);
  });

  it("prices Capacity by each call's stable weight, for a bare call too, as queryInfo weighs it", async () => {
    const call = c.api.tx.messages.addIpfsMessage(
      17,
      'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
      99,
    );
    const details = (await c.api.rpc.frequencyTxPayment.computeCapacityFeeDetails(call.toHex(), null)).inclusionFee;
    const { baseFee, lenFee, adjustedWeightFee } = details.unwrap();
    // add_ipfs_message: 32,704 ns + 2 reads (89,193 ns) + 1 write (122,587 ns); the Capacity base weight is
    // 105,455 ns. The runtime's WeightToFee: Perbill(989,932) (0.1 CENT per ExtrinsicBaseWeight, 101,017 ns) times
    // the ref_time, to the nearest planck.
    const fee = (nanoseconds: bigint) => (nanoseconds * 1_000n * 989_932n + 499_999_999n) / 1_000_000_000n;
    expect(adjustedWeightFee.toBigInt()).toBe(fee(32_704n + 2n * 89_193n + 122_587n));
    expect(baseFee.toBigInt()).toBe(fee(105_455n));
    expect(lenFee.toBigInt()).toBe(BigInt(call.encodedLength) * 10_000n);
    const { weight } = await c.api.call.transactionPaymentApi.queryInfo(call.toU8a(), call.encodedLength);
    const weightFee = await c.api.call.transactionPaymentApi.queryWeightToFee(weight);
    expect(weightFee.toBigInt()).toBe(adjustedWeightFee.toBigInt());
  });
});
