import type { ApiPromise } from '@polkadot/api';
import type { Extrinsic } from '@polkadot/types/interfaces';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import { alreadyImported, submissionError } from './transactionErrors.js';

/**
 * Hands signed bytes to the node: `submitted`, or `known` when its pool has these very bytes already (the
 * tracker's scan, or the first attempt, sent them). Any other answer throws the SubmissionError it means.
 */
export async function sendSigned(
  api: ApiPromise,
  extrinsic: SubmittableExtrinsic<'promise'> | Extrinsic,
): Promise<'submitted' | 'known'> {
  try {
    await api.rpc.author.submitExtrinsic(extrinsic);
    return 'submitted';
  } catch (error) {
    const refused = submissionError(error);
    if (alreadyImported(refused)) return 'known';
    throw refused;
  }
}
