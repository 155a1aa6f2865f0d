import { jest } from '@jest/globals';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { CommonPrimitivesHandlesClaimHandlePayload } from '@polkadot/types/lookup';
import { canonicalize, isValidHandle } from '../src/pallets/handles/rules.js';
import { suffixSeed, suffixSequence } from '../src/pallets/handles/suffixes.js';
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

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('handle rules', () => {
  it('derives the suffix sequence of a canonical base as the runtime does', () => {
    expect(suffixSeed('abcdefg')).toBe(15079896798642598352n);
    expect(suffixSequence('abcdefg', 10, 99).slice(0, 10)).toEqual([23, 65, 16, 53, 25, 75, 29, 26, 10, 87]);
    expect(suffixSequence('a11ce', 10, 99).slice(0, 5)).toEqual([43, 91, 73, 55, 36]);
    const all = suffixSequence('a11ce', 10, 99);
    expect(new Set(all).size).toBe(90);
    expect(Math.min(...all)).toBe(10);
    expect(Math.max(...all)).toBe(99);
  });

  it('canonicalizes whitespace, diacritics, look-alikes and case', () => {
    expect(canonicalize('Alice')).toBe('a11ce');
    expect(canonicalize('AlICE')).toBe('a11ce');
    // Upper-case L has no look-alike mapping, so "ALICE" is a different canonical base.
    expect(canonicalize('ALICE')).toBe('al1ce');
    expect(canonicalize('Zaë')).toBe('zae');
    expect(canonicalize(' a l\u200dice ')).toBe('a11ce');
  });

  it('validates length, blocked characters, character sets and reserved words', () => {
    expect(isValidHandle(utf8('Alice'))).toBe(true);
    expect(isValidHandle(utf8('Al'))).toBe(false);
    expect(isValidHandle(utf8('a'.repeat(21)))).toBe(false);
    expect(isValidHandle(utf8('al@ce'))).toBe(false);
    expect(isValidHandle(utf8('admin'))).toBe(false);
    expect(isValidHandle(utf8('~~~~'))).toBe(false);
    expect(isValidHandle(new Uint8Array([0xff, 0xfe, 0x41]))).toBe(false);
    expect(isValidHandle(utf8('Ünïcödé'))).toBe(true);
  });
});

describe('Handles pallet through a real client', () => {
  let c: Connected;
  let dave: KeyringPair;
  let eve: KeyringPair;
  beforeAll(async () => {
    c = await connect();
    dave = c.pair('Dave');
    eve = c.pair('Eve');
  });
  afterAll(async () => c.close());

  const claimPayload = async (handle: string, lifetime = 50) =>
    c.api.createType('CommonPrimitivesHandlesClaimHandlePayload', {
      baseHandle: handle,
      expiration: (await nextBlock(c.api)) + lifetime,
    }) as unknown as CommonPrimitivesHandlesClaimHandlePayload;
  const claim = async (user: KeyringPair, handle: string, lifetime = 50, signer = user) => {
    const payload = await claimPayload(handle, lifetime);
    return submit(
      c.api.tx.frequencyTxPayment.payWithCapacity(
        c.api.tx.handles.claimHandle(user.address, signPayload(signer, payload), payload),
      ),
      c.alice,
    );
  };

  it('claims a handle with the sequence suffix, and answers the handle RPCs and runtime APIs', async () => {
    const daveMsa = await sponsor(c.api, c.alice, dave);
    const outcome = await claim(dave, 'Dave');
    expect(eventNames(outcome)).toContain('handles.HandleClaimed');
    const suffix = suffixSequence('dave', 10, 99)[0] as number;
    const claimed = outcome.result.events.find(({ event }) => event.method === 'HandleClaimed')!.event;
    expect(claimed.data[1]!.toHuman()).toBe(`Dave.${suffix}`);

    const handle = (await c.api.rpc.handles.getHandleForMsa(daveMsa)).unwrap();
    expect(handle.base_handle.toString()).toBe('Dave');
    expect(handle.canonical_base.toString()).toBe('dave');
    expect(handle.suffix.toNumber()).toBe(suffix);
    expect((await c.api.rpc.handles.getMsaForHandle(`DAVE.${suffix}`)).unwrap().toNumber()).toBe(daveMsa);
    expect((await c.api.rpc.handles.getMsaForHandle('Dave.1')).isNone).toBe(true);
    expect((await c.api.rpc.handles.validateHandle('admin')).isTrue).toBe(false);
    const next = await c.api.rpc.handles.getNextSuffixes('dAvE', 3);
    expect(next.suffixes.map((s: { toNumber(): number }) => s.toNumber())).toEqual(
      suffixSequence('dave', 10, 99).slice(1, 4),
    );

    const viaApi = (await c.api.call.handlesRuntimeApi.getHandleForMsa(daveMsa)).unwrap();
    expect(viaApi.suffix.toNumber()).toBe(suffix);
    const check = await c.api.call.handlesRuntimeApi.checkHandle('  Dave  ');
    expect(check.valid.isTrue).toBe(true);
    expect(check.baseHandle.toUtf8()).toBe('Dave');
    expect(check.canonicalBase.toUtf8()).toBe('dave');
    expect(check.suffixIndex.toNumber()).toBe(1);
    expect((await c.api.call.handlesRuntimeApi.checkHandle('x')).valid.isTrue).toBe(false);
  });

  it('gives the next claim of the same canonical base the next suffix, and refuses a second handle', async () => {
    await sponsor(c.api, c.alice, eve);
    const outcome = await claim(eve, 'DAVE');
    const claimed = outcome.result.events.find(({ event }) => event.method === 'HandleClaimed')!.event;
    expect(claimed.data[1]!.toHuman()).toBe(`DAVE.${suffixSequence('dave', 10, 99)[1]}`);
    expect(moduleError(c.api, await claim(eve, 'Another'))).toBe('handles.MSAHandleAlreadyExists');
  });

  it('refuses bad handles, forged and expired proofs with the runtime errors', async () => {
    expect(moduleError(c.api, await claim(c.charlie, 'Charlie'))).toBe('handles.InvalidMessageSourceAccount');
    expect(moduleError(c.api, await claim(dave, 'Davey', 50, eve))).toBe('handles.InvalidSignature');
    expect(moduleError(c.api, await claim(dave, 'Davey', 300))).toBe('handles.ProofNotYetValid');
    expect(moduleError(c.api, await claim(dave, 'Davey', -1))).toBe('handles.ProofHasExpired');
    expect(moduleError(c.api, await claim(dave, 'x'.repeat(33)))).toBe('handles.InvalidHandleByteLength');
  });

  it('changes a handle (retire, then claim) and retires it only after the claim expired', async () => {
    const payload = await claimPayload('Davina', 3);
    const changed = await submit(
      c.api.tx.frequencyTxPayment.payWithCapacity(
        c.api.tx.handles.changeHandle(dave.address, signPayload(dave, payload), payload),
      ),
      c.alice,
    );
    expect(eventNames(changed).filter((name) => name.startsWith('handles.'))).toEqual([
      'handles.HandleRetired',
      'handles.HandleClaimed',
    ]);
    const early = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(submit(c.api.tx.handles.retireHandle(), dave)).rejects.toThrow('Custom error: 255');
    early.mockRestore();
    // Let the claim's expiration pass.
    for (let i = 0; i < 3; i++) await submit(c.api.tx.system.remark('tick'), c.alice);
    const retired = await submit(c.api.tx.handles.retireHandle(), dave);
    expect(eventNames(retired)).toContain('handles.HandleRetired');
    const daveMsa = (await c.api.query.msa.publicKeyToMsaId(dave.address)).unwrap().toNumber();
    expect((await c.api.rpc.handles.getHandleForMsa(daveMsa)).isNone).toBe(true);
  });
});
