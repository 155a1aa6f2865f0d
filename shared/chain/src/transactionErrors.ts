import type { ApiPromise } from '@polkadot/api';
import type { SpRuntimeDispatchError } from '@polkadot/types/lookup';
import { stringCamelCase } from '@polkadot/util';
/** Why the node refused a transaction at submission (the pool's JSON-RPC errors, typed). */
export class SubmissionError extends Error {
  constructor(
    readonly kind: 'nonceConflict' | 'badSignature' | 'cannotPayFees' | 'ancientBirthBlock' | 'invalid' | 'rpc',
    message: string,
  ) {
    super(message);
    this.name = 'SubmissionError';
  }

  /** Whether submitting again (with a fresh nonce or era) may succeed. */
  get retryable(): boolean {
    return this.kind === 'nonceConflict' || this.kind === 'ancientBirthBlock' || this.kind === 'rpc';
  }
}

/** Maps what `author_submitExtrinsic` rejected with to a SubmissionError. */
export function submissionError(error: unknown): SubmissionError {
  const message = error instanceof Error ? error.message : String(error);
  if (/Priority is too low|Transaction is outdated|Transaction Already Imported/i.test(message))
    return new SubmissionError('nonceConflict', message);
  if (/bad signature/i.test(message)) return new SubmissionError('badSignature', message);
  if (/Inability to pay some fees/i.test(message)) return new SubmissionError('cannotPayFees', message);
  if (/ancient birth block/i.test(message)) return new SubmissionError('ancientBirthBlock', message);
  if (/Invalid Transaction|Unknown Transaction/i.test(message)) return new SubmissionError('invalid', message);
  return new SubmissionError('rpc', message);
}

/** The pool has this very transaction already: it was submitted, and submitting it again changes nothing. */
export const alreadyImported = (error: SubmissionError): boolean =>
  error.kind === 'nonceConflict' && /Transaction Already Imported/i.test(error.message);

/**
 * A dispatch error as requests, webhooks and logs report it. A pallet's error (`DispatchError::Module`) carries
 * the pallet (`module`, its name in the metadata, and `index`, its place in the runtime) and the error (`name`,
 * and `code`, its place in the pallet's Error enum): `Handles` 66, `MSAHandleAlreadyExists` 9. Other dispatch
 * errors have only a name: the variant (`BadOrigin`), with its detail when it has one (`Token.FundsUnavailable`).
 */
export interface ChainError {
  message: string;
  module?: string;
  name: string;
  index?: number;
  code?: number;
}

/** `Token.FundsUnavailable`, `handles.MSAHandleAlreadyExists`: how the error reads in one word. */
export const chainErrorText = (error: Pick<ChainError, 'module' | 'name'>): string =>
  error.module ? `${error.module.charAt(0).toLowerCase()}${error.module.slice(1)}.${error.name}` : error.name;

/** The pallet index and error code of a module error, as a line reads them. */
const where = (error: ChainError) =>
  error.index === undefined ? '' : ` (pallet index ${error.index}, error code ${error.code})`;

/** Builds the reported form from what the chain said. */
export function chainError(parts: Omit<ChainError, 'message'>): ChainError {
  const error = { ...parts, message: '' };
  error.message = `the chain refused the transaction: ${chainErrorText(error)}${where(error)}`;
  return error;
}

/**
 * Decodes the `dispatchError` of `system.ExtrinsicFailed`. A module error names its pallet as the runtime's
 * metadata does and its error as the pallet's Error enum does; both numbers are read from the error itself
 * (`index`, and the first byte of `error`), so they are the chain's, not a lookup's.
 */
export function decodeDispatchError(api: ApiPromise, dispatchError: SpRuntimeDispatchError): ChainError {
  if (dispatchError.isModule) {
    const module = dispatchError.asModule;
    const index = module.index.toNumber();
    const code = module.error.toU8a()[0] as number;
    let name = `Error${code}`;
    let section: string | undefined;
    try {
      ({ name, section } = api.registry.findMetaError(module));
    } catch {
      // An error this metadata does not know (a newer runtime): the numbers still say which one it is.
    }
    const pallet = api.registry.metadata.pallets.find((entry) => entry.index.toNumber() === index);
    const palletName =
      pallet?.name.toString() ?? (section ? section.charAt(0).toUpperCase() + section.slice(1) : `Pallet${index}`);
    return chainError({ module: palletName, name, index, code });
  }
  // Token(FundsUnavailable), Arithmetic(Overflow), Transactional(LimitReached): the variant and its detail.
  const inner = dispatchError.value as unknown as { type?: unknown } | undefined;
  const detail = typeof inner?.type === 'string' && !dispatchError.isOther ? `.${inner.type}` : '';
  return chainError({ name: `${dispatchError.type}${detail}` });
}

/**
 * A pallet's error the gateway foresees and reports without submitting (the chain would refuse the call with
 * it): named and numbered from the runtime's metadata as `decodeDispatchError` would give it, with the
 * gateway's own `message`. Unknown to this runtime: the names only.
 */
export function foreseenChainError(api: ApiPromise, section: string, name: string, message: string): ChainError {
  const pallet = api.registry.metadata.pallets.find((entry) => stringCamelCase(entry.name.toString()) === section);
  const error = api.errors[section]?.[name];
  const module = pallet?.name.toString() ?? section.charAt(0).toUpperCase() + section.slice(1);
  if (!pallet || !error) return { message, module, name };
  return { message, module, name, index: pallet.index.toNumber(), code: error.meta.index.toNumber() };
}
