import { fromChain, type DelegationGate } from '@frequency-gateway/chain';
import { HttpError } from '@frequency-gateway/platform';

const STATUS_OF_REFUSAL = { 'no-msa': 400, 'not-delegated': 401, 'no-intent': 422 } as const;

/**
 * Refuses content the provider may not publish for its user, naming the field: 400 when the MSA does not exist,
 * 401 when the user has not delegated the intent to the provider, 422 when the chain has no such intent.
 */
export async function checkSender(
  gate: DelegationGate,
  field: string,
  msaId: bigint,
  intent: number | string,
): Promise<void> {
  const refusal = await fromChain(() => gate.refusal(msaId, intent));
  if (refusal) throw new HttpError(STATUS_OF_REFUSAL[refusal.reason], `${field}: ${refusal.message}`);
}

/** The 4xx answers of checkSender, for a route's documentation. */
export const SENDER_RESPONSES = {
  400: { description: 'A field is missing or malformed, or the user (msaId) has no MSA' },
  401: { description: "The user has not delegated the content's intent to this provider" },
  422: { description: 'The chain has no intent for this kind of content' },
} as const;
