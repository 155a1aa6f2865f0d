import type { Codec } from '@polkadot/types/types';
import { u8aToHex } from '@polkadot/util';
import { numberOf } from '../../runtime/codecs.js';
import type { RuntimeFacts } from '../../metadata/facts.js';
import type { AccountHex, BlockHookContext, DispatchContext, PalletRuntime } from '../../runtime/context.js';
import { DispatchFailure, INVALID, ModuleError, UNKNOWN, moduleErrorIndex } from '../../runtime/errors.js';
import { msaOf } from '../msa/accounts.js';
import { verifyPayloadSignature } from '@frequency-gateway/chain';
import {
  HANDLE_BYTES_MAX,
  canonicalProblem,
  canonicalize,
  decodeUtf8,
  handleProblem,
  trimAndCollapse,
} from './rules.js';
import { nextSuffixIndex, readDisplayHandle, suffixAt, type SuffixRange } from './queries.js';

export interface HandlesLimits extends SuffixRange {
  mortalityWindowSize: number;
}

const utf8Hex = (text: string) => u8aToHex(new TextEncoder().encode(text));

interface ClaimPayload {
  baseHandle: Codec;
  expiration: Codec;
}

/**
 * Gives an MSA a handle: the base handle's checks, its canonical form's checks, the next suffix of its
 * sequence. (claim_handle and change_handle after their payload checks; the devchain's extra genesis.)
 */
export function claimHandle(
  context: BlockHookContext,
  limits: HandlesLimits,
  msaId: number,
  baseBytes: Uint8Array,
  expiration: number,
): string {
  if (readDisplayHandle(context, msaId)) throw new ModuleError('Handles', 'MSAHandleAlreadyExists');
  const base = decodeUtf8(baseBytes);
  if (base === undefined) throw new ModuleError('Handles', 'InvalidHandleEncoding');
  const baseProblem = handleProblem(base);
  // The base handle's own checks come first; the canonical ones follow.
  if (baseProblem === 'InvalidHandleCharacterLength' || baseProblem === 'HandleContainsBlockedCharacters')
    throw new ModuleError('Handles', baseProblem);
  const canonical = canonicalize(base);
  const problem = canonicalProblem(canonical);
  if (problem) throw new ModuleError('Handles', problem);
  const index = nextSuffixIndex(context, canonical, limits);
  const suffix = index === undefined ? undefined : suffixAt(canonical, index, limits);
  if (index === undefined || suffix === undefined) throw new ModuleError('Handles', 'SuffixesExhausted');
  const display = `${trimAndCollapse(base)}.${suffix}`;
  const canonicalKey = utf8Hex(canonical);
  context.storage.set(context.state, 'Handles', 'CanonicalBaseHandleAndSuffixToMSAId', [canonicalKey, suffix], msaId);
  context.storage.set(
    context.state,
    'Handles',
    'CanonicalBaseHandleToSuffixIndex',
    [canonicalKey],
    [index, limits.min],
  );
  context.storage.set(context.state, 'Handles', 'MSAIdToDisplayName', [msaId], [utf8Hex(display), expiration]);
  context.deposit('Handles', 'HandleClaimed', { msaId, handle: utf8Hex(display) });
  return display;
}

export function handlesPallet(limits: HandlesLimits): PalletRuntime {
  /** The checks claim_handle and change_handle share, in the runtime's order, up to the signature. */
  const acceptPayload = (context: DispatchContext, args: Record<string, Codec>) => {
    if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
    const payload = args.payload as unknown as ClaimPayload & Codec;
    const baseBytes = payload.baseHandle.toU8a(true);
    if (baseBytes.length > HANDLE_BYTES_MAX) throw new ModuleError('Handles', 'InvalidHandleByteLength');
    const owner = (args.msaOwnerKey as Codec).toHex() as AccountHex;
    const msaId = msaOf(context, owner);
    if (msaId === undefined) throw new ModuleError('Handles', 'InvalidMessageSourceAccount');
    const expiration = numberOf(payload.expiration);
    if (expiration >= context.blockNumber + limits.mortalityWindowSize)
      throw new ModuleError('Handles', 'ProofNotYetValid');
    if (context.blockNumber >= expiration) throw new ModuleError('Handles', 'ProofHasExpired');
    if (!verifyPayloadSignature(owner, args.proof as Codec, payload, 'ClaimHandlePayload'))
      throw new ModuleError('Handles', 'InvalidSignature');
    return { msaId, baseBytes, expiration };
  };

  const retire = (context: DispatchContext, msaId: number) => {
    const stored = readDisplayHandle(context, msaId);
    if (!stored) throw new ModuleError('Handles', 'MSAHandleDoesNotExist');
    if (stored.display === undefined || stored.parts === undefined) throw new ModuleError('Handles', 'InvalidHandle');
    context.storage.set(context.state, 'Handles', 'MSAIdToDisplayName', [msaId], undefined);
    context.storage.set(
      context.state,
      'Handles',
      'CanonicalBaseHandleAndSuffixToMSAId',
      [utf8Hex(canonicalize(stored.parts.base)), stored.parts.suffix],
      undefined,
    );
    context.deposit('Handles', 'HandleRetired', { msaId, handle: utf8Hex(stored.display) });
  };

  return {
    name: 'Handles',
    feeless: ['retireHandle'],
    calls: {
      claimHandle: (context, args) => {
        const { msaId, baseBytes, expiration } = acceptPayload(context, args);
        claimHandle(context, limits, msaId, baseBytes, expiration);
      },
      changeHandle: (context, args) => {
        const { msaId, baseBytes, expiration } = acceptPayload(context, args);
        retire(context, msaId);
        claimHandle(context, limits, msaId, baseBytes, expiration);
      },
      retireHandle: (context) => {
        if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
        const msaId = msaOf(context, context.origin.who);
        if (msaId === undefined) throw new ModuleError('Handles', 'InvalidMessageSourceAccount');
        retire(context, msaId);
      },
    },
    validate: {
      // HandlesSignedExtension: a handle may be retired only once its claim's expiration has passed.
      retireHandle: (context) => {
        const msaId = msaOf(context, context.signer);
        // The extension reports a key without an MSA as Custom(index of Msa's NoKeyExists).
        if (msaId === undefined) throw INVALID.custom(moduleErrorIndex(context.registry, 'Msa', 'NoKeyExists'));
        const stored = readDisplayHandle(context, msaId);
        if (!stored) throw UNKNOWN.cannotLookup();
        // DispatchError::Other(HandleWithinMortalityPeriod) maps to Custom(255).
        if (context.blockNumber < stored.expiration) throw INVALID.custom(255);
      },
    },
  };
}

/** The Handles pallet's constants: suffix range and payload mortality window. */
export function handleLimits(facts: RuntimeFacts): HandlesLimits {
  const constants = facts.constants.Handles as Record<string, { value: unknown }>;
  return {
    min: Number(constants.handleSuffixMin?.value),
    max: Number(constants.handleSuffixMax?.value),
    mortalityWindowSize: Number(constants.mortalityWindowSize?.value),
  };
}
