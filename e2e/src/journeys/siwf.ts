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
  /** The base handle to claim. */
  handle: string;
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
    const claimHandle = { baseHandle: request.handle, expiration };
    const message = this.loginMessage(request.loginUri);
    return {
      userPublicKey: { encodedValue: this.address, encoding: 'base58', format: 'ss58', type: 'Sr25519' },
      payloads: [
        {
          signature: this.signCodec(codecs.addProvider(addProvider)),
          endpoint: { pallet: 'msa', extrinsic: 'createSponsoredAccountWithDelegation' },
          type: 'addProvider',
          payload: addProvider,
        },
        {
          signature: this.signCodec(codecs.claimHandle(claimHandle)),
          endpoint: { pallet: 'handles', extrinsic: 'claimHandle' },
          type: 'claimHandle',
          payload: claimHandle,
        },
        { signature: this.sign(u8aWrapBytes(stringToU8a(message))), type: 'login', payload: { message } },
      ],
    };
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
