import type { ApiPromise } from '@polkadot/api';
import { Keyring } from '@polkadot/keyring';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { Signer, SignerPayloadRaw, SignerResult } from '@polkadot/types/types';
import { hexToU8a, isHex, u8aConcat, u8aToHex } from '@polkadot/util';
import { blake2AsU8a, cryptoWaitReady, encodeAddress, mnemonicValidate } from '@polkadot/util-crypto';

/** The provider's signing key: its AccountId32, SS58 address and a polkadot-js Signer for extrinsics. */
export interface ProviderKey {
  type: 'sr25519' | 'ethereum';
  /** 0x-hex of the AccountId32 (for Ethereum keys: the address followed by twelve 0xEE bytes). */
  accountId: `0x${string}`;
  address: string;
  signer: Signer;
}

export class ProviderIdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderIdentityError';
  }
}

/** Signs raw payloads as the runtime verifies extrinsics: the payload, blake2-reduced when over 256 bytes. */
function rawSigner(pair: KeyringPair, typePrefix: number): Signer {
  let id = 0;
  return {
    signRaw: async ({ data }: SignerPayloadRaw): Promise<SignerResult> => {
      const bytes = hexToU8a(data);
      const message = bytes.length > 256 ? blake2AsU8a(bytes) : bytes;
      return { id: ++id, signature: u8aToHex(u8aConcat([typePrefix], pair.sign(message))) };
    },
  };
}

/**
 * The provider key from PROVIDER_ACCOUNT_SEED_PHRASE: an sr25519 mnemonic or secret URI (`//Alice`, a mnemonic
 * with derivations), or a 0x-prefixed 32-byte Ethereum private key. The secret never leaves this object.
 */
export async function loadProviderKey(secret: string, ss58Format = 42): Promise<ProviderKey> {
  await cryptoWaitReady();
  const trimmed = secret.trim();
  if (isHex(trimmed, 256)) {
    const pair = new Keyring({ type: 'ethereum' }).addFromSeed(hexToU8a(trimmed));
    const accountId = u8aConcat(pair.addressRaw, new Uint8Array(12).fill(0xee));
    return {
      type: 'ethereum',
      accountId: u8aToHex(accountId) as `0x${string}`,
      address: encodeAddress(accountId, ss58Format),
      signer: rawSigner(pair, 2),
    };
  }
  const phrase = trimmed.split('/')[0]?.trim() ?? '';
  if (!trimmed.startsWith('/') && !mnemonicValidate(phrase)) {
    throw new ProviderIdentityError(
      'PROVIDER_ACCOUNT_SEED_PHRASE is neither a valid mnemonic, a secret URI (//Name) nor a 0x Ethereum private key',
    );
  }
  const pair = new Keyring({ type: 'sr25519', ss58Format }).addFromUri(trimmed);
  return {
    type: 'sr25519',
    accountId: u8aToHex(pair.publicKey) as `0x${string}`,
    address: pair.address,
    signer: rawSigner(pair, 1),
  };
}

/**
 * Checks at worker start that the key controls PROVIDER_ID and that this MSA is a registered provider;
 * throws ProviderIdentityError saying which is wrong.
 */
export async function verifyProvider(api: ApiPromise, key: ProviderKey, providerId: number | bigint): Promise<void> {
  const msa = await api.query.msa.publicKeyToMsaId(key.accountId);
  if (msa.isNone)
    throw new ProviderIdentityError(
      `the provider key ${key.address} has no MSA; PROVIDER_ID ${providerId} needs its key`,
    );
  const owner = msa.unwrap().toBigInt();
  if (owner !== BigInt(providerId))
    throw new ProviderIdentityError(
      `the provider key ${key.address} belongs to MSA ${owner}, not to PROVIDER_ID ${providerId}`,
    );
  const entry = await api.query.msa.providerToRegistryEntryV2(providerId);
  if (entry.isNone) throw new ProviderIdentityError(`MSA ${providerId} is not a registered provider`);
}
