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

/** A chain error as requests and webhooks report it: `msa.DuplicateProvider` → module Msa, name DuplicateProvider. */
export function describeChainError(error: string): { message: string; module?: string; name: string } {
  const [section, name] = error.includes('.') ? error.split('.', 2) : [undefined, error];
  const module = section ? section.charAt(0).toUpperCase() + section.slice(1) : undefined;
  return {
    message: `the chain refused the transaction: ${error}`,
    ...(module ? { module } : {}),
    name: name as string,
  };
}
