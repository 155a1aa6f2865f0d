/** The outcome of one attempt to take or keep a lease. */
export interface LeaseAttempt {
  held: boolean;
  /** Who holds the lease now, when known. */
  holder?: string;
  /**
   * A number that grows every time the lease changes hands. Work done under the lease can carry it so that
   * a deposed leader's late writes are recognisable.
   */
  token: number;
}

/** One lease in one store (Redis or the Kubernetes API). Each call is a single atomic attempt. */
export interface LeaseLock {
  readonly description: string;
  tryAcquireOrRenew(identity: string, leaseDurationMs: number): Promise<LeaseAttempt>;
  /** Gives the lease up if `identity` holds it, so a successor need not wait for it to expire. */
  release(identity: string): Promise<void>;
}
