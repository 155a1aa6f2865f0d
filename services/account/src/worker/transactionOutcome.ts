import { textOfHex, type ChainEvent } from '@frequency-gateway/chain';

// What a successful account transaction did, read from its block's events: pure, so that it is tested on its own
// (test/transactionOutcome.test.ts).

const eventsOf = (events: ChainEvent[], section: string, method: string) =>
  events
    .filter((event) => event.section === section && event.method === method)
    .map((event) => event.data as unknown[]);

const text = (value: unknown) => (value === undefined || value === null ? undefined : String(value));

/** What the webhook and the request record report of a successful transaction, from its events. */
export function readOutcome(events: ChainEvent[]) {
  const first = (section: string, method: string) => eventsOf(events, section, method)[0];
  const created = first('msa', 'MsaCreated');
  const granted = first('msa', 'DelegationGranted');
  const claimed = first('handles', 'HandleClaimed');
  const keyAdded = first('msa', 'PublicKeyAdded');
  const retired = first('msa', 'MsaRetired');
  const revoked = first('msa', 'DelegationRevoked');
  const page = first('statefulStorage', 'ItemizedPageUpdated') ?? first('statefulStorage', 'PaginatedPageUpdated');
  const withdrawn = first('capacity', 'CapacityWithdrawn');
  return {
    msaId: text(
      created?.[0] ?? claimed?.[0] ?? granted?.[1] ?? keyAdded?.[0] ?? retired?.[0] ?? revoked?.[1] ?? page?.[0],
    ),
    handle: claimed ? textOfHex(claimed[1]) : undefined,
    newPublicKey: text(keyAdded?.[1]),
    revokedProviderId: text(revoked?.[0]),
    capacityWithdrawn: withdrawn
      ? { msaId: String(withdrawn[0]), amount: BigInt(withdrawn[1] as string | number).toString() }
      : undefined,
  };
}
