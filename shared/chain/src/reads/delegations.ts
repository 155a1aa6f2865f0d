export interface Grant {
  intentId: number;
  /** Effective revocation block (0 = active): the earlier of the delegation's and the grant's. */
  revokedAt: number;
  /** The grant's own revocation block (0 = not revoked), whatever the delegation's. */
  explicitRevokedAt: number;
}

export interface Delegation {
  providerId: bigint;
  revokedAt: number;
  grants: Grant[];
}

type ChainDelegation = {
  providerId: { toBigInt(): bigint };
  revokedAt: { toNumber(): number };
  permissions: {
    grantedId: { toNumber(): number };
    revokedAt: { toNumber(): number };
    explicitRevokedAt: { toNumber(): number };
  }[];
};

/** A delegation as the msa runtime API returns it, read into plain values. */
export const delegationOf = (value: ChainDelegation): Delegation => ({
  providerId: value.providerId.toBigInt(),
  revokedAt: value.revokedAt.toNumber(),
  grants: value.permissions.map((grant) => ({
    intentId: grant.grantedId.toNumber(),
    revokedAt: grant.revokedAt.toNumber(),
    explicitRevokedAt: grant.explicitRevokedAt.toNumber(),
  })),
});
