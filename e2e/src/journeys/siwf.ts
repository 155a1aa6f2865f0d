import { randomBytes } from 'node:crypto';
import { SignedPayloads } from '@frequency-gateway/chain';
import type { ApiPromise } from '@polkadot/api';
import { Keyring } from '@polkadot/keyring';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { mnemonicGenerate } from '@polkadot/util-crypto';

/** The parts of a Sign In With Frequency v2 response the gateway's sign-in reads. */
interface SiwfSignature {
  algo: 'SR25519';
  encoding: 'base16';
  encodedValue: `0x${string}`;
}
interface SiwfPayload {
  signature: SiwfSignature;
  type: 'addProvider' | 'claimHandle' | 'login';
  endpoint?: { pallet: string; extrinsic: string };
  payload: Record<string, unknown>;
}
export interface SiwfResponse {
  userPublicKey: { encodedValue: string; encoding: 'base58'; format: 'ss58'; type: 'Sr25519' };
  payloads: SiwfPayload[];
}

export interface SignUpRequest {
  providerId: number;
  intentIds: number[];
  /** The expiration block of the chain payloads. */
  expiration: number;
  /** The base handle to claim; none: the sign-up claims no handle. */
  handle?: string;
  /** The login message's URI line, which the account api checks against SIWF_V2_URI_VALIDATION. */
  loginUri: string;
}

/**
 * A new Frequency user with an sr25519 key, as the SIWF access UI acts for them: a sign-up response (delegation to
 * the provider, a handle, a login) and the proof of a handle change, signed over the chain's own SCALE codecs
 * (`<Bytes>`-wrapped, as wallets sign). Needs the crypto WASM: await `cryptoWaitReady()` first.
 */
export class SiwfUser {
  readonly address: string;
  private readonly pair: KeyringPair;

  constructor() {
    this.pair = new Keyring({ type: 'sr25519' }).addFromUri(mnemonicGenerate());
    this.address = this.pair.address;
  }

  signUp(api: ApiPromise, request: SignUpRequest): SiwfResponse {
    const codecs = new SignedPayloads(api);
    const { expiration } = request;
    const addProvider = { authorizedMsaId: request.providerId, intentIds: request.intentIds, expiration };
    const message = this.loginMessage(request.loginUri);
    const claimHandle = request.handle === undefined ? [] : [this.claimHandlePayload(api, request.handle, expiration)];
    return {
      userPublicKey: { encodedValue: this.address, encoding: 'base58', format: 'ss58', type: 'Sr25519' },
      payloads: [
        {
          signature: this.signCodec(codecs.addProvider(addProvider)),
          endpoint: { pallet: 'msa', extrinsic: 'createSponsoredAccountWithDelegation' },
          type: 'addProvider',
          payload: addProvider,
        },
        ...claimHandle,
        { signature: this.sign(u8aWrapBytes(stringToU8a(message))), type: 'login', payload: { message } },
      ],
    };
  }

  private claimHandlePayload(api: ApiPromise, baseHandle: string, expiration: number): SiwfPayload {
    const payload = { baseHandle, expiration };
    return {
      signature: this.signCodec(new SignedPayloads(api).claimHandle(payload)),
      endpoint: { pallet: 'handles', extrinsic: 'claimHandle' },
      type: 'claimHandle',
      payload,
    };
  }

  /** The user's public key, hex (the AddKeyData payload's newPublicKey). */
  get accountId(): `0x${string}` {
    return u8aToHex(this.pair.publicKey);
  }

  /** The proof of an AddKeyData payload, as POST /v1/keys/add takes it from the owner and from the new key. */
  addKeyProof(
    api: ApiPromise,
    payload: { msaId: bigint | number; expiration: number; newPublicKey: `0x${string}` },
  ): `0x${string}` {
    return this.signCodec(new SignedPayloads(api).addKeyData(payload)).encodedValue;
  }

  /** A wallet's signRaw of a transaction's signing payload (typed: the key type's byte first), as the POSTs of
   * /v3/delegations/revokeDelegation and /v1/accounts/retireMsa take it. */
  signTransactionPayload(payloadToSign: `0x${string}`): `0x${string}` {
    return u8aToHex(this.pair.sign(hexToU8a(payloadToSign), { withType: true }));
  }

  /** The proof of a ClaimHandlePayload, as POST /v1/handles and /v1/handles/change take it. */
  claimHandleProof(api: ApiPromise, payload: { baseHandle: string; expiration: number }): `0x${string}` {
    return this.signCodec(new SignedPayloads(api).claimHandle(payload)).encodedValue;
  }

  /** The CAIP-122 sign-in message, valid for five minutes. */
  private loginMessage(uri: string): string {
    const issuedAt = new Date();
    return [
      `${new URL(uri).hostname} wants you to sign in with your Frequency account:`,
      `frequency:dev:${this.address}`,
      '',
      `URI: ${uri}`,
      'Version: 1',
      `Nonce: ${randomBytes(12).toString('hex')}`,
      'Chain ID: frequency:dev',
      `Issued At: ${issuedAt.toISOString()}`,
      `Expiration Time: ${new Date(issuedAt.getTime() + 5 * 60_000).toISOString()}`,
    ].join('\n');
  }

  private signCodec(codec: Codec): SiwfSignature {
    return this.sign(hexToU8a(SignedPayloads.signingBytes(codec).wrapped));
  }

  private sign(message: Uint8Array): SiwfSignature {
    return { algo: 'SR25519', encoding: 'base16', encodedValue: u8aToHex(this.pair.sign(message)) };
  }
}

/** base64url of the response's JSON: the `authorizationPayload` of POST /v2/accounts/siwf. */
export function authorizationPayload(response: SiwfResponse): string {
  return Buffer.from(JSON.stringify(response), 'utf8').toString('base64url');
}
