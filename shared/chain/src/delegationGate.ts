import type { SchemaDirectory } from './directory.js';

/** Why the provider may not publish for a user: no such MSA, or no delegation of the intent to the provider. */
export type DelegationRefusal =
  | { reason: 'no-msa'; message: string }
  | { reason: 'not-delegated'; message: string }
  | { reason: 'no-intent'; message: string };

/** How many granted (user, intent) pairs are remembered; the oldest is forgotten first. */
const REMEMBERED = 100_000;

/**
 * Whether the provider may publish an intent's content for a user: the user's MSA exists and has delegated the
 * intent to the provider (the provider itself always may). Read at the best block, so that a user whose sign-up
 * was just included can publish at once. A granted pair is remembered for `ttlMs` (a revocation takes effect
 * here within it); a refusal is not remembered, so that a sign-up or a new grant counts at the next request.
 */
export class DelegationGate {
  private readonly granted = new Map<string, number>();

  constructor(
    private readonly directory: SchemaDirectory,
    private readonly providerId: bigint,
    private readonly options: { ttlMs: number },
  ) {}

  async refusal(msaId: bigint, intent: number | string): Promise<DelegationRefusal | undefined> {
    if (msaId === this.providerId) return undefined;
    const key = `${msaId}:${intent}`;
    const at = this.granted.get(key);
    if (at !== undefined && Date.now() - at < this.options.ttlMs) return undefined;
    this.granted.delete(key);
    const queries = await this.directory.queries();
    if (!(await queries.msaExists(msaId))) return { reason: 'no-msa', message: `MSA ${msaId} does not exist` };
    const intentId = typeof intent === 'number' ? intent : (await this.directory.intentByName(intent))?.intentId;
    if (intentId === undefined)
      return { reason: 'no-intent', message: `intent ${intent} is not registered on this chain` };
    if (!(await queries.isDelegatedFor(msaId, this.providerId, intentId))) {
      const named = typeof intent === 'number' ? `intent ${intent}` : `intent ${intentId} (${intent})`;
      return {
        reason: 'not-delegated',
        message: `user ${msaId} has not delegated ${named} to provider ${this.providerId}`,
      };
    }
    if (this.granted.size >= REMEMBERED) this.granted.delete(this.granted.keys().next().value as string);
    this.granted.set(key, Date.now());
    return undefined;
  }
}
