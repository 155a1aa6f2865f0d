import { Keyring } from '@polkadot/keyring';
import { u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { parseExtraGenesis, startDevchain, type Devchain } from '@frequency-gateway/devchain';
import {
  SignedPayloads,
  connectChain,
  ethereumAccountId,
  loadProviderKey,
  type ChainConnection,
} from '../src/index.js';

describe('signed payloads', () => {
  let devchain: Devchain;
  let chain: ChainConnection;
  let payloads: SignedPayloads;
  beforeAll(async () => {
    await cryptoWaitReady();
    devchain = await startDevchain({ genesis: await parseExtraGenesis({ users: [{ account: '//Dave' }] }) });
    chain = await connectChain({ url: devchain.url });
    payloads = new SignedPayloads(chain.api);
  });
  afterAll(async () => {
    await chain?.close();
    await devchain?.close();
  });

  it('reads the expiration windows from the chain', () => {
    expect([payloads.windowOf('msa'), payloads.windowOf('handles'), payloads.windowOf('statefulStorage')]).toEqual([
      200, 200, 28_800,
    ]);
    expect(payloads.expiration('msa', 1000)).toBe(1100);
  });

  it('builds the golden AddProvider and ClaimHandle encodings', () => {
    const addProvider = payloads.addProvider({ authorizedMsaId: 1, intentIds: [17, 19], expiration: 100 });
    expect(SignedPayloads.signingBytes(addProvider).encoded).toBe('0x01000000000000000811001300' + '64000000');
    const claim = payloads.claimHandle({ baseHandle: 'alice', expiration: 100 });
    expect(SignedPayloads.signingBytes(claim)).toEqual({
      encoded: '0x14616c69636564000000',
      wrapped: '0x3c42797465733e14616c696365640000003c2f42797465733e',
    });
  });

  it('verifies sr25519, ed25519 and Ethereum signatures, raw and wrapped, and refuses others', () => {
    const payload = payloads.claimHandle({ baseHandle: 'dave', expiration: 500 });
    const sr = new Keyring({ type: 'sr25519' }).addFromUri('//Dave');
    const ed = new Keyring({ type: 'ed25519' }).addFromUri('//Dave');
    const eth = new Keyring({ type: 'ethereum' }).addFromUri(
      '0x5fb92d6e98884f76de468fa3f6278f8807c48bebc13595d45af5bdc4da702133',
    );
    const ethAccount = u8aToHex(ethereumAccountId(eth.addressRaw)) as `0x${string}`;
    const bytes = payload.toU8a();
    const check = (signer: `0x${string}`, algo: 'Sr25519' | 'Ed25519' | 'Ecdsa', signature: Uint8Array) =>
      SignedPayloads.verify(signer, { algo, encodedValue: u8aToHex(signature) }, payload, 'ClaimHandlePayload');
    expect(check(u8aToHex(sr.publicKey), 'Sr25519', sr.sign(u8aWrapBytes(bytes)))).toBe(true);
    expect(check(u8aToHex(sr.publicKey), 'Sr25519', sr.sign(bytes))).toBe(true);
    expect(check(u8aToHex(ed.publicKey), 'Ed25519', ed.sign(u8aWrapBytes(bytes)))).toBe(true);
    expect(check(ethAccount, 'Ecdsa', eth.sign(bytes))).toBe(true);
    expect(check(u8aToHex(sr.publicKey), 'Sr25519', sr.sign(u8aWrapBytes(new Uint8Array([1, 2]))))).toBe(false);
    expect(check(u8aToHex(ed.publicKey), 'Sr25519', sr.sign(bytes))).toBe(false);
    // Ethereum keys never accept the <Bytes> wrapping.
    expect(check(ethAccount, 'Ecdsa', eth.sign(u8aWrapBytes(bytes)))).toBe(false);
  });

  it('builds payloads the chain accepts', async () => {
    const dave = new Keyring({ type: 'sr25519' }).addFromUri('//Dave');
    const finalized = (await chain.api.rpc.chain.getHeader()).number.toNumber();
    const payload = payloads.claimHandle({
      baseHandle: 'Davide',
      expiration: payloads.expiration('handles', finalized),
    });
    const alice = await loadProviderKey('//Alice');
    const events = await new Promise<string[]>((resolve, reject) => {
      chain.api.tx.frequencyTxPayment
        .payWithCapacity(
          chain.api.tx.handles.claimHandle(
            dave.address,
            { Sr25519: u8aToHex(dave.sign(u8aWrapBytes(payload.toU8a()))) },
            payload as never,
          ),
        )
        .signAndSend(alice.address, { signer: alice.signer }, (result) => {
          if (result.status.isFinalized) resolve(result.events.map(({ event }) => event.method));
        })
        .catch(reject);
    });
    expect(events).toContain('HandleClaimed');
  });
});
