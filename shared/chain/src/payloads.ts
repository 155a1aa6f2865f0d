import type { ApiPromise } from '@polkadot/api';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, u8aToHex, u8aWrapBytes } from '@polkadot/util';
import type { Eip712Payload } from './signatures/eip712.js';
import { verifyPayloadSignature } from './signatures/payload.js';
import type { SignatureParts, UserSignature } from './signatures/verify.js';

export type ItemAction = { Add: { data: `0x${string}` } } | { Delete: { index: number } };

/** Which window a payload's expiration lives in. */
export type PayloadWindow = 'msa' | 'handles' | 'statefulStorage';

/**
 * Builds the SCALE payloads users sign for the account flows, with the chain's own types, and checks their
 * signatures the way the runtime does (raw or `<Bytes>`-wrapped for sr25519/ed25519; EIP-191 or EIP-712 for
 * Ethereum keys).
 */
export class SignedPayloads {
  constructor(private readonly api: ApiPromise) {}

  addProvider(value: { authorizedMsaId: bigint | number; intentIds: number[]; expiration: number }): Codec {
    return this.api.createType('PalletMsaAddProvider', value);
  }

  addKeyData(value: { msaId: bigint | number; expiration: number; newPublicKey: string }): Codec {
    return this.api.createType('PalletMsaAddKeyData', value);
  }

  claimHandle(value: { baseHandle: string; expiration: number }): Codec {
    return this.api.createType('CommonPrimitivesHandlesClaimHandlePayload', value);
  }

  itemizedV2(value: { schemaId: number; targetHash: number; expiration: number; actions: ItemAction[] }): Codec {
    return this.api.createType('PalletStatefulStorageItemizedSignaturePayloadV2', value);
  }

  paginatedUpsertV2(value: {
    schemaId: number;
    pageId: number;
    targetHash: number;
    expiration: number;
    payload: `0x${string}`;
  }): Codec {
    return this.api.createType('PalletStatefulStoragePaginatedUpsertSignaturePayloadV2', value);
  }

  paginatedDeleteV2(value: { schemaId: number; pageId: number; targetHash: number; expiration: number }): Codec {
    return this.api.createType('PalletStatefulStoragePaginatedDeleteSignaturePayloadV2', value);
  }

  /** The bytes a wallet is asked to sign: the SCALE payload, and its `<Bytes>`-wrapped form (signRaw). */
  static signingBytes(payload: Codec): { encoded: `0x${string}`; wrapped: `0x${string}` } {
    const encoded = payload.toU8a();
    return { encoded: u8aToHex(encoded), wrapped: u8aToHex(u8aWrapBytes(encoded)) };
  }

  /** The window (blocks) a payload's expiration must fall in, read from the chain's constants. */
  windowOf(window: PayloadWindow): number {
    const consts = this.api.consts as unknown as Record<string, { mortalityWindowSize?: { toNumber(): number } }>;
    const size = consts[window]?.mortalityWindowSize?.toNumber();
    if (size === undefined) throw new Error(`the chain declares no mortality window for ${window}`);
    return size;
  }

  /**
   * An expiration for a payload signed now: half its window after the finalized head, so it is valid when the
   * transaction lands (the runtime wants current < expiration < current + window) with room for delays.
   */
  expiration(window: PayloadWindow, finalizedBlock: number): number {
    return finalizedBlock + Math.floor(this.windowOf(window) / 2);
  }

  recoveryCommitment(value: { recoveryCommitment: string; expiration: number }): Codec {
    return this.api.createType('PalletMsaRecoveryCommitmentPayload', {
      discriminant: 'RecoveryCommitmentPayload',
      ...value,
    });
  }

  /**
   * Whether `signer` (an AccountId32, 0x-hex) signed `payload`; `chainId` is the EIP-712 domain of the network
   * (`eip712ChainIdOf`), which only Ethereum-key signatures depend on.
   */
  static verify(
    signer: `0x${string}`,
    signature: UserSignature,
    payload: Codec,
    kind: Eip712Payload,
    chainId?: number,
  ): boolean {
    const parts: SignatureParts = { type: signature.algo, bytes: hexToU8a(signature.encodedValue) };
    return verifyPayloadSignature(signer, parts, payload, kind, chainId);
  }
}
