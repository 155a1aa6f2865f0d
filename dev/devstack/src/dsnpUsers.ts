/** The intents a provider publishes DSNP content under, one per announcement type. */
export const DSNP_CONTENT_INTENTS = [
  'dsnp.broadcast',
  'dsnp.reply',
  'dsnp.reaction',
  'dsnp.update',
  'dsnp.tombstone',
  'dsnp.profile',
] as const;

/**
 * Extra genesis (the devchain's --genesis document) with `count` users who delegated every DSNP content intent
 * to the provider: after the dev provider (MSA 1) and any providers before them, they are MSA 2, 3, ….
 */
export function dsnpUsers(count: number, provider = 1) {
  return {
    users: Array.from({ length: count }, (_, index) => ({
      account: `//DsnpUser/${index}`,
      delegations: [{ provider, intents: [...DSNP_CONTENT_INTENTS] }],
    })),
  };
}
