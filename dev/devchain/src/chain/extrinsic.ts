import type { GenericExtrinsic } from '@polkadot/types';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a } from '@polkadot/util';
import { accountOfAddress } from '../runtime/codecs.js';
import type { Runtime } from '../runtime/runtime.js';
import type { AccountHex } from '../runtime/context.js';
import { INVALID, TransactionRejected, UNKNOWN } from '../runtime/errors.js';
import { readAccount, spendable } from '../pallets/balances.js';
import { signatureParts, verifyExactly } from '@frequency-gateway/chain';
import type { StateView } from '../state/state.js';

export type Hex = `0x${string}`;

/** A decoded, signature-checked extrinsic and what the pool needs to order it. */
export interface CheckedExtrinsic {
  hash: Hex;
  bytes: Uint8Array;
  extrinsic: GenericExtrinsic;
  signer?: AccountHex;
  nonce: number;
  tip: bigint;
  fee: bigint;
  /** Last block number in which it may be included. */
  validUntil: number;
}

export interface ChainFacts {
  genesisHash: Hex;
  specVersion: number;
  transactionVersion: number;
  existentialDeposit: bigint;
  baseFee: bigint;
  byteFee: bigint;
}

/** The fee a signed extrinsic pays from its balance: a base fee, a length fee, and the tip. */
export const feeOf = (facts: ChainFacts, length: number, tip: bigint) =>
  facts.baseFee + BigInt(length) * facts.byteFee + tip;

/**
 * Decodes a signed extrinsic and checks its signature over the exact signing payload, whose birth block hash
 * comes from the era (so an expired era fails as a bad signature, as on a real node), against the state after
 * block `current - 1` with that block's hash recorded. The pool checks this, and so does a block import
 * (`BlockBuilder.import`), which leaves nonce, fees and the pallets' checks to the block builder.
 */
export function verifySigned(
  runtime: Runtime,
  facts: ChainFacts,
  state: StateView,
  current: number,
  bytes: Uint8Array,
): CheckedExtrinsic & { signer: AccountHex } {
  let extrinsic: GenericExtrinsic;
  try {
    extrinsic = runtime.registry.createType('Extrinsic', bytes) as unknown as GenericExtrinsic;
  } catch {
    throw new TransactionRejected(1002, 'Verification Error', 'Could not decode the extrinsic');
  }
  if (!extrinsic.isSigned) {
    // Unsigned extrinsics are inherents, which only the block author adds.
    throw INVALID.call();
  }
  const signer = accountOfAddress(extrinsic.signer);
  if (!signer) throw UNKNOWN.cannotLookup();
  const era = extrinsic.era;
  const birth = era.isMortalEra ? era.asMortalEra.birth(current) : 0;
  // Born before the hash window (System.BlockHashCount), or after the block it would be in.
  if (birth > current || !runtime.storage.has(state, 'System', 'BlockHash', birth)) throw INVALID.ancientBirthBlock();
  const birthHash = runtime.storage.get(state, 'System', 'BlockHash', birth).toHex();
  const payload = runtime.registry.createType(
    'ExtrinsicPayload',
    {
      method: extrinsic.method.toHex(),
      era,
      nonce: extrinsic.nonce,
      tip: extrinsic.tip,
      specVersion: facts.specVersion,
      transactionVersion: facts.transactionVersion,
      genesisHash: facts.genesisHash,
      blockHash: birthHash,
      mode: extrinsic.mode,
    },
    { version: 4 },
  );
  let message = payload.toU8a({ method: true });
  if (message.length > 256) message = runtime.registry.hash(message).toU8a();
  const signature = signatureParts(
    (extrinsic.inner as unknown as { signature: { multiSignature: Codec } }).signature.multiSignature,
  );
  if (!verifyExactly(message, signature, hexToU8a(signer))) throw INVALID.badProof();
  const tip = extrinsic.tip.toBigInt();
  return {
    hash: extrinsic.hash.toHex() as Hex,
    bytes,
    extrinsic,
    signer,
    nonce: extrinsic.nonce.toNumber(),
    tip,
    fee: paysFromBalance(runtime, extrinsic) ? feeOf(facts, extrinsic.encodedLength, tip) : 0n,
    validUntil: era.isMortalEra ? era.asMortalEra.death(current) - 1 : Number.MAX_SAFE_INTEGER,
  };
}

/**
 * Validates an extrinsic for the pool against the state after block `current - 1`, as the runtime's
 * transaction extensions do: the signature (see `verifySigned`), nonce (stale or future), fees and the
 * pallets' own checks.
 */
export function checkExtrinsic(
  runtime: Runtime,
  facts: ChainFacts,
  state: StateView,
  current: number,
  bytes: Uint8Array,
): CheckedExtrinsic & { future: boolean } {
  const checked = verifySigned(runtime, facts, state, current, bytes);
  const { extrinsic, signer, nonce, fee } = checked;
  const account = readAccount({ state, storage: runtime.storage }, signer);
  if (nonce < account.nonce) throw INVALID.stale();
  // Capacity-paid calls are charged (and refused) by frequencyTxPayment itself.
  if (paysFromBalance(runtime, extrinsic) && spendable(account, facts.existentialDeposit, false) < fee)
    throw INVALID.payment();
  const call = extrinsic.method as never;
  const { storage, registry } = runtime;
  runtime.validate({ state, storage, registry, signer, blockNumber: current, call, length: bytes.length }, call);
  return { ...checked, future: nonce > account.nonce };
}

/** Whether the fee is paid in tokens (not with Capacity, and not a `Pays::No` call). */
export function paysFromBalance(runtime: Runtime, extrinsic: GenericExtrinsic): boolean {
  return runtime.payment(extrinsic.method) === 'tokens';
}
