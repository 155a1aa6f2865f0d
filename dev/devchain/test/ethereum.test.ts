import { jest } from '@jest/globals';
import { Keyring } from '@polkadot/keyring';
import type { Signer, SignerPayloadRaw } from '@polkadot/types/types';
import type {
  CommonPrimitivesHandlesClaimHandlePayload,
  PalletMsaAuthorizedKeyData,
  PalletMsaAddProvider,
  PalletStatefulStorageItemizedSignaturePayloadV2,
} from '@polkadot/types/lookup';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { blake2AsU8a, cryptoWaitReady } from '@polkadot/util-crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_CHAIN_ID, ethereumAccountId } from '@frequency-gateway/chain';
import { connect, eventNames, moduleError, nextBlock, submit, type Connected } from './support/client.js';

const PRIVATE_KEY = '0x5fb92d6e98884f76de468fa3f6278f8807c48bebc13595d45af5bdc4da702133' as const;
const DOMAIN = {
  name: 'Frequency',
  version: '1',
  chainId: DEV_CHAIN_ID,
  verifyingContract: '0xcccccccccccccccccccccccccccccccccccccccc',
} as const;

/** Ethereum-style keys: a viem account signs typed data independently of the devchain's own EIP-712 code. */
describe('Ethereum-style keys', () => {
  let c: Connected;
  const wallet = privateKeyToAccount(PRIVATE_KEY);
  const accountId = u8aToHex(ethereumAccountId(hexToU8a(wallet.address)));
  beforeAll(async () => {
    await cryptoWaitReady();
    c = await connect();
    await submit(c.api.tx.balances.transferKeepAlive(accountId, 10n ** 12n), c.alice);
  });
  afterAll(async () => c.close());

  /** Signs extrinsic payloads the way the runtime verifies ECDSA: keccak of the (blake2-reduced) payload. */
  const ethereumSigner: Signer = {
    signRaw: async ({ data }: SignerPayloadRaw) => {
      const bytes = hexToU8a(data);
      const message = bytes.length > 256 ? blake2AsU8a(bytes) : bytes;
      const keyring = new Keyring({ type: 'ethereum' });
      const pair = keyring.addFromSeed(hexToU8a(PRIVATE_KEY));
      return { id: 1, signature: u8aToHex(new Uint8Array([2, ...pair.sign(message)])) };
    },
  };

  it('accepts an extrinsic signed with an Ethereum key and refuses a blake2-based ecdsa key', async () => {
    const outcome = await new Promise<string[]>((resolve, reject) => {
      c.api.tx.system
        .remark('from ethereum')
        .signAndSend(accountId, { signer: ethereumSigner }, (result) => {
          if (result.status.isFinalized) resolve(result.events.map(({ event }) => event.method));
        })
        .catch(reject);
    });
    expect(outcome).toContain('ExtrinsicSuccess');

    const ecdsa = new Keyring({ type: 'ecdsa' }).addFromUri('//Alice');
    const blake2Account = u8aToHex(ethereumAccountId(blake2AsU8a(ecdsa.publicKey).slice(0, 20)));
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(
      c.api.tx.system.remark('x').signAndSend(blake2Account, {
        signer: {
          signRaw: async ({ data }) => ({ id: 2, signature: u8aToHex(new Uint8Array([2, ...ecdsa.sign(data)])) }),
        },
      }),
    ).rejects.toThrow();
    silenced.mockRestore();
  });

  it('signs an Ethereum user up with an EIP-712 AddProvider signature', async () => {
    const expiration = (await nextBlock(c.api)) + 100;
    const payload = c.api.createType('PalletMsaAddProvider', {
      authorizedMsaId: 1,
      intentIds: [2, 17],
      expiration,
    }) as unknown as PalletMsaAddProvider;
    const signature = await wallet.signTypedData({
      domain: DOMAIN,
      types: {
        AddProvider: [
          { name: 'authorizedMsaId', type: 'uint64' },
          { name: 'intentIds', type: 'uint16[]' },
          { name: 'expiration', type: 'uint32' },
        ],
      },
      primaryType: 'AddProvider',
      message: { authorizedMsaId: 1n, intentIds: [2, 17], expiration },
    });
    const forged = { Ecdsa: `0x${signature[2] === '1' ? '2' : '1'}${signature.slice(3)}` };
    const refused = await submit(
      c.api.tx.msa.createSponsoredAccountWithDelegation(accountId, forged, payload),
      c.alice,
    );
    expect(moduleError(c.api, refused)).toBe('msa.InvalidSignature');
    const outcome = await submit(
      c.api.tx.msa.createSponsoredAccountWithDelegation(accountId, { Ecdsa: signature }, payload),
      c.alice,
    );
    expect(eventNames(outcome)).toContain('msa.MsaCreated');
  });

  it('claims a handle with an EIP-712 signature and accepts an EIP-191 signature of the SCALE payload', async () => {
    const expiration = (await nextBlock(c.api)) + 50;
    const payload = c.api.createType('CommonPrimitivesHandlesClaimHandlePayload', {
      baseHandle: 'Satoshi',
      expiration,
    }) as unknown as CommonPrimitivesHandlesClaimHandlePayload;
    const typed = await wallet.signTypedData({
      domain: DOMAIN,
      types: {
        ClaimHandlePayload: [
          { name: 'handle', type: 'string' },
          { name: 'expiration', type: 'uint32' },
        ],
      },
      primaryType: 'ClaimHandlePayload',
      message: { handle: 'Satoshi', expiration },
    });
    const claimed = await submit(c.api.tx.handles.claimHandle(accountId, { Ecdsa: typed }, payload), c.alice);
    expect(eventNames(claimed)).toContain('handles.HandleClaimed');

    const change = c.api.createType('CommonPrimitivesHandlesClaimHandlePayload', {
      baseHandle: 'Nakamoto',
      expiration,
    }) as unknown as CommonPrimitivesHandlesClaimHandlePayload;
    const personal = await wallet.signMessage({ message: { raw: change.toU8a() } });
    const changed = await submit(c.api.tx.handles.changeHandle(accountId, { Ecdsa: personal }, change), c.alice);
    expect(eventNames(changed)).toContain('handles.HandleClaimed');
  });

  it('adds a key-agreement item with an EIP-712 ItemizedSignaturePayloadV2 signature', async () => {
    const expiration = (await nextBlock(c.api)) + 100;
    const data = u8aToHex(new Uint8Array(32).fill(7));
    const payload = c.api.createType('PalletStatefulStorageItemizedSignaturePayloadV2', {
      schemaId: 7,
      targetHash: 0,
      expiration,
      actions: [{ Add: { data } }],
    }) as unknown as PalletStatefulStorageItemizedSignaturePayloadV2;
    const signature = await wallet.signTypedData({
      domain: DOMAIN,
      types: {
        ItemizedSignaturePayloadV2: [
          { name: 'schemaId', type: 'uint16' },
          { name: 'targetHash', type: 'uint32' },
          { name: 'expiration', type: 'uint32' },
          { name: 'actions', type: 'ItemAction[]' },
        ],
        ItemAction: [
          { name: 'actionType', type: 'string' },
          { name: 'data', type: 'bytes' },
          { name: 'index', type: 'uint16' },
        ],
      },
      primaryType: 'ItemizedSignaturePayloadV2',
      message: { schemaId: 7, targetHash: 0, expiration, actions: [{ actionType: 'Add', data, index: 0 }] },
    });
    const outcome = await submit(
      c.api.tx.statefulStorage.applyItemActionsWithSignatureV2(accountId, { Ecdsa: signature }, payload),
      c.alice,
    );
    expect(eventNames(outcome)).toContain('statefulStorage.ItemizedPageUpdated');
  });

  it("withdraws the tokens of the Ethereum user's MSA to the key its owner authorized with EIP-712", async () => {
    const msaId = (await c.api.query.msa.publicKeyToMsaId(accountId)).unwrap().toBigInt();
    const { accountId: msaAddress } = await c.api.call.msaRuntimeApi.getEthereumAddressForMsaId(msaId);
    await submit(
      c.api.tx.balances.transferKeepAlive(u8aToHex(ethereumAccountId(msaAddress.toU8a())), 5n * 10n ** 8n),
      c.alice,
    );
    const receiver = new Keyring({ type: 'sr25519' }).addFromUri('//Withdrawer');
    const expiration = (await nextBlock(c.api)) + 50;
    const payload = c.api.createType('PalletMsaAuthorizedKeyData', {
      discriminant: 'AuthorizedKeyData',
      msaId,
      expiration,
      authorizedPublicKey: receiver.address,
    }) as unknown as PalletMsaAuthorizedKeyData;
    const signature = await wallet.signTypedData({
      domain: DOMAIN,
      types: {
        AuthorizedKeyData: [
          { name: 'msaId', type: 'uint64' },
          { name: 'expiration', type: 'uint32' },
          { name: 'authorizedPublicKey', type: 'address' },
        ],
      },
      primaryType: 'AuthorizedKeyData',
      // An sr25519 key has no Ethereum address: the runtime encodes it as the zero address.
      message: { msaId, expiration, authorizedPublicKey: `0x${'00'.repeat(20)}` },
    });
    const withdraw = c.api.tx.msa.withdrawTokens(accountId, { Ecdsa: signature }, payload);
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(withdraw.signAndSend(c.bob)).rejects.toThrow('Custom error: 5');
    silenced.mockRestore();
    const outcome = await submit(withdraw, receiver, { nonce: 0 });
    expect(eventNames(outcome)).toContain('balances.Transfer');
    const received = await c.api.query.system.account(receiver.address);
    expect(received.data.free.toBigInt()).toBe(5n * 10n ** 8n);
    // A free call from a key with no account leaves its nonce alone, as CheckNonce does.
    expect(received.nonce.toNumber()).toBe(0);
  });
});

/** Extrinsics whose sender is a 20-byte Ethereum address (MultiAddress::Address20), as Ethereum wallets send them. */
describe('20-byte Ethereum senders and destinations', () => {
  let c: Connected;
  let pair: ReturnType<Keyring['addFromUri']>;
  let accountId: `0x${string}`;
  beforeAll(async () => {
    await cryptoWaitReady();
    c = await connect();
    pair = new Keyring({ type: 'ethereum' }).addFromSeed(hexToU8a(PRIVATE_KEY));
    accountId = u8aToHex(ethereumAccountId(hexToU8a(pair.address))) as `0x${string}`;
  });
  afterAll(async () => c.close());

  it('credits an Address20 destination to the Ethereum-style account (address ‖ 0xEE×12)', async () => {
    expect(pair.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const outcome = await submit(c.api.tx.balances.transferKeepAlive({ Address20: pair.address }, 10n ** 12n), c.alice);
    expect(eventNames(outcome)).toContain('balances.Transfer');
    expect((await c.api.query.system.account(accountId)).data.free.toBigInt()).toBe(10n ** 12n);
  });

  it('accepts a transaction signed by the Ethereum key with its 20-byte address as sender, charged to that account', async () => {
    const tx = c.api.tx.balances.transferKeepAlive(c.bob.address, 10n ** 9n);
    // As Ethereum-key clients do: the nonce is given (polkadot-js cannot look a 20-byte account up itself).
    await tx.signAsync(pair, { nonce: 0 });
    expect((tx.signer as unknown as { type: string }).type).toBe('Address20');
    const before = (await c.api.query.system.account(accountId)).data.free.toBigInt();
    const outcome = await new Promise<string[]>((resolve, reject) => {
      tx.send((result) => {
        if (result.status.isFinalized) resolve(result.events.map(({ event }) => `${event.section}.${event.method}`));
      }).catch(reject);
    });
    expect(outcome).toContain('system.ExtrinsicSuccess');
    const after = await c.api.query.system.account(accountId);
    expect(after.nonce.toNumber()).toBe(1);
    expect(before - after.data.free.toBigInt()).toBeGreaterThan(10n ** 9n);
  });

  it('refuses a 20-byte sender whose signature is from another key as a bad signature', async () => {
    const other = new Keyring({ type: 'ethereum' }).addFromSeed(new Uint8Array(32).fill(9));
    const tx = c.api.tx.system.remark('forged');
    await tx.signAsync(other, { nonce: 1 });
    // Keep the signature, claim the funded address as the sender.
    const forged = c.api.createType('Extrinsic', tx.toHex()) as unknown as { toHex(): string; signature: unknown };
    const bytes = hexToU8a(forged.toHex());
    const otherAddress = hexToU8a(other.address);
    const at = bytes.findIndex((_, i) => otherAddress.every((b, j) => bytes[i + j] === b));
    bytes.set(hexToU8a(pair.address), at);
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(c.api.rpc.author.submitExtrinsic(u8aToHex(bytes))).rejects.toThrow(/bad signature/);
    silenced.mockRestore();
  });
});
