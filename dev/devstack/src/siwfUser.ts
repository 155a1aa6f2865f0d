import { randomBytes } from 'node:crypto';
import {
  createAddKeyData,
  createAddProvider,
  createClaimHandlePayload,
  createItemizedAddAction,
  createItemizedSignaturePayloadV2,
  createPaginatedUpsertSignaturePayloadV2,
  createRandomKey,
  createSiwfLoginRequestPayload,
  getKeyringPairFromSecp256k1PrivateKey,
  getUnifiedAddress,
  getUnifiedPublicKey,
  sign,
  type SupportedPayload,
} from '@frequency-chain/ethereum-utils';
import { SignedPayloads } from '@frequency-gateway/chain';
import type { ApiPromise } from '@polkadot/api';
import { Keyring } from '@polkadot/keyring';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, isHex, stringToU8a, u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { cryptoIsReady, ethereumEncode, mnemonicGenerate } from '@polkadot/util-crypto';
import type {
  SiwfPublicKey,
  SiwfResponse,
  SiwfResponsePayload,
  SiwfResponsePayloadAddProvider,
  SiwfResponsePayloadClaimHandle,
  SiwfResponsePayloadItemActions,
  SiwfResponsePayloadLogin,
} from '@projectlibertylabs/siwf';

export type { SiwfResponse } from '@projectlibertylabs/siwf';

export type KeyKind = 'sr25519' | 'ethereum';

export interface LoginOptions {
  /** The domain the message names on its first line (default 'localhost'). */
  domain?: string;
  /** The URI line, which `validateSiwfResponse` compares with its `loginMsgUri` (default 'https://localhost/login'). */
  uri?: string;
  /** Default: random. */
  nonce?: string;
  /** Default: now. */
  issuedAt?: Date;
  /** Default: five minutes after now; null leaves the Expiration Time line out. */
  expirationTime?: Date | null;
}

export interface SignUpOptions {
  providerId: bigint | number;
  intentIds: number[];
  /** The expiration block of every chain payload (callers compute it from the finalized head). */
  expiration: number;
  /** The base handle to claim; without it, no claimHandle payload. */
  handle?: string;
  /** Items to add to an itemized page (e.g. a graph public key); without it, no itemActions payload. */
  itemActions?: { schemaId: number; targetHash: number; items: `0x${string}`[] };
  /** Login message options; false leaves the login payload out (default: a login payload is included). */
  login?: LoginOptions | false;
}

type Signature = SiwfResponsePayload['signature'];

/** The chain id of the CAIP-122 login message on development chains. */
const CHAIN_ID = 'frequency:dev';
/** The EIP-712 domain ethereum-utils signs with: 'Dev' selects the dev/testnet chain id 420420420. */
const CHAIN_TYPE = 'Dev';

/**
 * A Frequency user as the SIWF access UI acts for them: holds a key (sr25519 or an Ethereum secp256k1 key) and
 * returns SIWF v2 responses whose signatures the chain accepts. The sr25519 chain payloads are signed over the
 * chain's own SCALE codecs (`<Bytes>`-wrapped, as wallets sign); Ethereum payloads are EIP-712 typed data, and
 * the Ethereum login message is an EIP-191 personal message.
 *
 * sr25519 keys need the crypto WASM: await `cryptoWaitReady()` before `SiwfUser.create`.
 */
export class SiwfUser {
  /** The 32-byte AccountId32 the chain stores (Ethereum keys: the 20-byte address followed by twelve 0xEE bytes). */
  readonly accountId: `0x${string}`;
  /** sr25519: the SS58 address; Ethereum: the SS58 address of the unified AccountId32. */
  readonly address: string;
  /** The key as SIWF sends it in `userPublicKey`. */
  readonly publicKey: SiwfPublicKey;

  private constructor(
    readonly kind: KeyKind,
    private readonly pair: KeyringPair,
    private readonly privateKey?: `0x${string}`,
  ) {
    if (kind === 'sr25519') {
      this.accountId = u8aToHex(pair.publicKey);
      this.address = pair.address;
      this.publicKey = { encodedValue: pair.address, encoding: 'base58', format: 'ss58', type: 'Sr25519' };
    } else {
      this.accountId = u8aToHex(getUnifiedPublicKey(pair));
      this.address = getUnifiedAddress(pair);
      // ethereumEncode gives the EIP-55 (mixed-case checksum) form of the 20-byte address.
      this.publicKey = {
        encodedValue: ethereumEncode(pair.publicKey),
        encoding: 'base16',
        format: 'eip-55',
        type: 'Secp256k1',
      };
    }
  }

  /** A user with a random key, or the key of `seed` (sr25519: a secret URI or mnemonic; Ethereum: a 0x private key). */
  static create(kind: KeyKind, seed?: string): SiwfUser {
    if (kind === 'sr25519') {
      if (!cryptoIsReady()) throw new Error('SiwfUser.create: await cryptoWaitReady() first (sr25519 needs WASM)');
      const pair = new Keyring({ type: 'sr25519' }).addFromUri(seed ?? mnemonicGenerate());
      return new SiwfUser(kind, pair);
    }
    const privateKey = (seed ?? createRandomKey().privateKey) as `0x${string}`;
    if (!isHex(privateKey, 256)) throw new Error('SiwfUser.create: an Ethereum seed is a 0x-hex 32-byte private key');
    return new SiwfUser(kind, getKeyringPairFromSecp256k1PrivateKey(hexToU8a(privateKey)), privateKey);
  }

  /**
   * The response of a sign-up: addProvider (msa.createSponsoredAccountWithDelegation), then itemActions
   * (statefulStorage.applyItemActionsWithSignatureV2) and claimHandle (handles.claimHandle) when asked for, in
   * the order SIWF documents them, then a login payload unless `login: false`.
   */
  async signUp(api: ApiPromise, options: SignUpOptions): Promise<SiwfResponse> {
    const codecs = new SignedPayloads(api);
    const { expiration } = options;
    const payloads: SiwfResponsePayload[] = [];

    const addProvider: SiwfResponsePayloadAddProvider['payload'] = {
      authorizedMsaId: Number(options.providerId),
      intentIds: [...options.intentIds],
      expiration,
    };
    payloads.push({
      signature: await this.signChainPayload(
        () => codecs.addProvider({ ...addProvider, authorizedMsaId: options.providerId }),
        () => createAddProvider(BigInt(options.providerId), addProvider.intentIds, expiration),
      ),
      endpoint: { pallet: 'msa', extrinsic: 'createSponsoredAccountWithDelegation' },
      type: 'addProvider',
      payload: addProvider,
    } satisfies SiwfResponsePayloadAddProvider);

    if (options.itemActions) {
      const { schemaId, targetHash, items } = options.itemActions;
      const itemActions: SiwfResponsePayloadItemActions['payload'] = {
        schemaId,
        targetHash,
        expiration,
        actions: items.map((payloadHex) => ({ type: 'addItem', payloadHex })),
      };
      payloads.push({
        signature: await this.signChainPayload(
          () =>
            codecs.itemizedV2({
              schemaId,
              targetHash,
              expiration,
              actions: items.map((data) => ({ Add: { data } })),
            }),
          () =>
            createItemizedSignaturePayloadV2(
              schemaId,
              targetHash,
              expiration,
              items.map((data) => createItemizedAddAction(data)),
            ),
        ),
        endpoint: { pallet: 'statefulStorage', extrinsic: 'applyItemActionsWithSignatureV2' },
        type: 'itemActions',
        payload: itemActions,
      } satisfies SiwfResponsePayloadItemActions);
    }

    if (options.handle !== undefined) {
      const claimHandle: SiwfResponsePayloadClaimHandle['payload'] = { baseHandle: options.handle, expiration };
      payloads.push({
        signature: await this.signChainPayload(
          () => codecs.claimHandle(claimHandle),
          () => createClaimHandlePayload(claimHandle.baseHandle, expiration),
        ),
        endpoint: { pallet: 'handles', extrinsic: 'claimHandle' },
        type: 'claimHandle',
        payload: claimHandle,
      } satisfies SiwfResponsePayloadClaimHandle);
    }

    if (options.login !== false) payloads.push(await this.loginPayload(options.login ?? {}));
    return { userPublicKey: { ...this.publicKey }, payloads };
  }

  /** The response for a returning user: one login payload. */
  async login(options: LoginOptions = {}): Promise<SiwfResponse> {
    return { userPublicKey: { ...this.publicKey }, payloads: [await this.loginPayload(options)] };
  }

  /** The CAIP-122 sign-in message, as the SIWF access UI writes it. */
  loginMessage(options: LoginOptions = {}): string {
    const issuedAt = options.issuedAt ?? new Date();
    const expirationTime =
      options.expirationTime === undefined ? new Date(Date.now() + 5 * 60_000) : options.expirationTime;
    return [
      `${options.domain ?? 'localhost'} wants you to sign in with your Frequency account:`,
      `${CHAIN_ID}:${this.publicKey.encodedValue}`,
      '',
      `URI: ${options.uri ?? 'https://localhost/login'}`,
      'Version: 1',
      `Nonce: ${options.nonce ?? randomBytes(12).toString('hex')}`,
      `Chain ID: ${CHAIN_ID}`,
      `Issued At: ${issuedAt.toISOString()}`,
      ...(expirationTime ? [`Expiration Time: ${expirationTime.toISOString()}`] : []),
    ].join('\n');
  }

  private async loginPayload(options: LoginOptions): Promise<SiwfResponsePayloadLogin> {
    const message = this.loginMessage(options);
    const signature =
      this.kind === 'sr25519'
        ? this.sr25519Signature(u8aWrapBytes(stringToU8a(message)))
        : await this.ethereumSignature(createSiwfLoginRequestPayload(message));
    return { signature, type: 'login', payload: { message } };
  }

  /** The user's proof of a ClaimHandlePayload, as POST /v1/handles takes it (0x hex). */
  async claimHandleProof(api: ApiPromise, payload: { baseHandle: string; expiration: number }): Promise<string> {
    const signature = await this.signChainPayload(
      () => new SignedPayloads(api).claimHandle(payload),
      () => createClaimHandlePayload(payload.baseHandle, payload.expiration),
    );
    return signature.encodedValue;
  }

  /** The user's proof of an AddKeyData payload (as MSA owner or as the new key), as POST /v1/keys/add takes it. */
  async addKeyProof(
    api: ApiPromise,
    payload: { msaId: bigint | number; expiration: number; newPublicKey: `0x${string}` },
  ): Promise<string> {
    const signature = await this.signChainPayload(
      () => new SignedPayloads(api).addKeyData(payload),
      () => createAddKeyData(BigInt(payload.msaId), payload.newPublicKey, payload.expiration),
    );
    return signature.encodedValue;
  }

  /** The user's proof of an ItemizedSignaturePayloadV2 that adds `items`, as POST /v1/keys/publicKeyAgreements takes it. */
  async addItemsProof(
    api: ApiPromise,
    payload: { schemaId: number; targetHash: number; expiration: number; items: `0x${string}`[] },
  ): Promise<string> {
    const { schemaId, targetHash, expiration, items } = payload;
    const signature = await this.signChainPayload(
      () =>
        new SignedPayloads(api).itemizedV2({
          schemaId,
          targetHash,
          expiration,
          actions: items.map((data) => ({ Add: { data } })),
        }),
      () => createItemizedSignaturePayloadV2(schemaId, targetHash, expiration, items.map(createItemizedAddAction)),
    );
    return signature.encodedValue;
  }

  /** The user's proof of a PaginatedUpsertSignaturePayloadV2 (a whole page), as POST /v1/ics/.../publishAll takes it. */
  async upsertPageProof(
    api: ApiPromise,
    page: { schemaId: number; pageId: number; targetHash: number; expiration: number; payload: `0x${string}` },
  ): Promise<string> {
    const signature = await this.signChainPayload(
      () => new SignedPayloads(api).paginatedUpsertV2(page),
      () =>
        createPaginatedUpsertSignaturePayloadV2(
          page.schemaId,
          page.pageId,
          page.targetHash,
          page.expiration,
          page.payload,
        ),
    );
    return signature.encodedValue;
  }

  /**
   * The user's signature of a transaction payload (what a wallet's signRaw returns), typed: 01 + sr25519, or
   * 02 + the ECDSA signature of the payload's keccak-256 for an Ethereum key.
   */
  signTransactionPayload(payloadToSign: `0x${string}`): `0x${string}` {
    return u8aToHex(this.pair.sign(hexToU8a(payloadToSign), { withType: true }));
  }

  /** sr25519: over the `<Bytes>`-wrapped SCALE bytes of the chain's codec; Ethereum: EIP-712 typed data. */
  private async signChainPayload(codec: () => Codec, typed: () => SupportedPayload): Promise<Signature> {
    if (this.kind === 'sr25519') return this.sr25519Signature(hexToU8a(SignedPayloads.signingBytes(codec()).wrapped));
    return this.ethereumSignature(typed());
  }

  private sr25519Signature(message: Uint8Array): Signature {
    return { algo: 'SR25519', encoding: 'base16', encodedValue: u8aToHex(this.pair.sign(message)) };
  }

  /** 65 bytes r ‖ s ‖ v with v = 27 or 28, as ethers (and wallets) return it. */
  private async ethereumSignature(payload: SupportedPayload): Promise<Signature> {
    const { Ecdsa } = await sign(this.privateKey as `0x${string}`, payload, CHAIN_TYPE);
    return { algo: 'SECP256K1', encoding: 'base16', encodedValue: Ecdsa };
  }
}

/** base64url (unpadded) of the response's JSON: the `authorizationPayload` the gateway's API receives. */
export function encodeAuthorizationPayload(response: SiwfResponse): string {
  return Buffer.from(JSON.stringify(response), 'utf8').toString('base64url');
}

/**
 * A copy of `response` whose payload at `index` carries a corrupted signature: one hex digit in the middle of
 * the second 32 bytes changed (s of sr25519 and of ECDSA), so the signature stays well-formed (an ECDSA r that is
 * no curve point would make some verifiers throw instead of answering false) and verifies for no key.
 */
export function tamper(response: SiwfResponse, index: number): SiwfResponse {
  const copy = structuredClone(response);
  const payload = copy.payloads[index];
  if (!payload) throw new Error(`tamper: the response has no payload ${index}`);
  const value = payload.signature.encodedValue;
  const at = 2 + 2 * 42;
  const digit = (parseInt(value.charAt(at), 16) ^ 0x1).toString(16);
  payload.signature = { ...payload.signature, encodedValue: value.slice(0, at) + digit + value.slice(at + 1) };
  return copy;
}
