import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aConcat } from '@polkadot/util';
import { keccakAsU8a } from '@polkadot/util-crypto';
import { ethereumAddressOf } from './verify.js';

const numberOf = (value: Codec) => (value as unknown as { toNumber(): number }).toNumber();

/** CHAIN_ID of development, local and testnet Frequency chains. */
export const DEV_CHAIN_ID = 420420420;

/** CHAIN_ID of Frequency mainnet. */
export const MAINNET_CHAIN_ID = 2091;

const VERIFYING_CONTRACT = hexToU8a('0x' + 'cc'.repeat(20));

const keccak = (...parts: Uint8Array[]) => keccakAsU8a(u8aConcat(...parts));
const text = (value: string) => keccak(stringToU8a(value));

/** An unsigned number as a 32-byte big-endian ABI word. */
function word(value: number | bigint): Uint8Array {
  const out = new Uint8Array(32);
  let rest = BigInt(value);
  for (let i = 31; i >= 0 && rest > 0n; i--) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

const address = (account: Uint8Array) => u8aConcat(new Uint8Array(12), ethereumAddressOf(account));

function domainSeparator(chainId: number): Uint8Array {
  return keccak(
    text('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
    text('Frequency'),
    text('1'),
    word(chainId),
    u8aConcat(new Uint8Array(12), VERIFYING_CONTRACT),
  );
}

/** The signed payloads that have an EIP-712 form, by their type name. */
export type Eip712Payload =
  | 'AddProvider'
  | 'AddKeyData'
  | 'AuthorizedKeyData'
  | 'ClaimHandlePayload'
  | 'RecoveryCommitmentPayload'
  | 'ItemizedSignaturePayloadV2'
  | 'PaginatedUpsertSignaturePayloadV2'
  | 'PaginatedDeleteSignaturePayloadV2';

type Fields = Record<string, Codec>;
const n = (fields: Fields, name: string) => word(numberOf(fields[name] as Codec));
const bytesHash = (fields: Fields, name: string) => keccakAsU8a((fields[name] as Codec).toU8a(true));

/** The struct hash (type hash and encoded fields) of each payload. */
const STRUCTS: Record<Eip712Payload, (fields: Fields) => Uint8Array> = {
  AddProvider: (f) =>
    keccak(
      text('AddProvider(uint64 authorizedMsaId,uint16[] intentIds,uint32 expiration)'),
      n(f, 'authorizedMsaId'),
      keccak(...(f.intentIds as unknown as Codec[]).map((id) => word(numberOf(id)))),
      n(f, 'expiration'),
    ),
  AddKeyData: (f) =>
    keccak(
      text('AddKeyData(uint64 msaId,uint32 expiration,address newPublicKey)'),
      n(f, 'msaId'),
      n(f, 'expiration'),
      address((f.newPublicKey as Codec).toU8a(true)),
    ),
  // The discriminant (which keeps its SCALE form apart from AddKeyData's) is not part of the typed data.
  AuthorizedKeyData: (f) =>
    keccak(
      text('AuthorizedKeyData(uint64 msaId,uint32 expiration,address authorizedPublicKey)'),
      n(f, 'msaId'),
      n(f, 'expiration'),
      address((f.authorizedPublicKey as Codec).toU8a(true)),
    ),
  ClaimHandlePayload: (f) =>
    keccak(text('ClaimHandlePayload(string handle,uint32 expiration)'), bytesHash(f, 'baseHandle'), n(f, 'expiration')),
  RecoveryCommitmentPayload: (f) =>
    keccak(
      text('RecoveryCommitmentPayload(bytes recoveryCommitment,uint32 expiration)'),
      bytesHash(f, 'recoveryCommitment'),
      n(f, 'expiration'),
    ),
  ItemizedSignaturePayloadV2: (f) =>
    keccak(
      text(
        'ItemizedSignaturePayloadV2(uint16 schemaId,uint32 targetHash,uint32 expiration,ItemAction[] actions)' +
          'ItemAction(string actionType,bytes data,uint16 index)',
      ),
      n(f, 'schemaId'),
      n(f, 'targetHash'),
      n(f, 'expiration'),
      keccak(
        ...(f.actions as unknown as { isAdd: boolean; asAdd: { data: Codec }; asDelete: { index: Codec } }[]).map(
          (action) =>
            keccak(
              text('ItemAction(string actionType,bytes data,uint16 index)'),
              text(action.isAdd ? 'Add' : 'Delete'),
              keccakAsU8a(action.isAdd ? action.asAdd.data.toU8a(true) : new Uint8Array()),
              word(action.isAdd ? 0 : numberOf(action.asDelete.index)),
            ),
        ),
      ),
    ),
  PaginatedUpsertSignaturePayloadV2: (f) =>
    keccak(
      text(
        'PaginatedUpsertSignaturePayloadV2(uint16 schemaId,uint16 pageId,uint32 targetHash,uint32 expiration,bytes payload)',
      ),
      n(f, 'schemaId'),
      n(f, 'pageId'),
      n(f, 'targetHash'),
      n(f, 'expiration'),
      bytesHash(f, 'payload'),
    ),
  PaginatedDeleteSignaturePayloadV2: (f) =>
    keccak(
      text('PaginatedDeleteSignaturePayloadV2(uint16 schemaId,uint16 pageId,uint32 targetHash,uint32 expiration)'),
      n(f, 'schemaId'),
      n(f, 'pageId'),
      n(f, 'targetHash'),
      n(f, 'expiration'),
    ),
};

/** The EIP-712 message a wallet signs for a payload: 0x1901 ‖ domain separator ‖ struct hash. */
export function eip712Message(kind: Eip712Payload, payload: Codec, chainId = DEV_CHAIN_ID): Uint8Array {
  return u8aConcat([0x19, 0x01], domainSeparator(chainId), STRUCTS[kind](payload as unknown as Fields));
}
