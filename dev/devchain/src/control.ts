/** The devchain's `dev_*` RPCs, for tests that make it behave as a live network does at its worst moments. */
export interface DevchainControl {
  /** Finality stops at `at` (the finalized block when omitted) while best blocks go on; resolves with that block. */
  stallFinality(at?: number): Promise<number>;
  /** Finality catches up with every block due; resolves with the finalized number. */
  resumeFinality(): Promise<number>;
  /** Every subscription open now sends nothing more; sockets stay open and new subscriptions work. */
  silenceSubscriptions(): Promise<number>;
  /** No block is sealed (transactions still enter the pool) until `resumeSealing`; resolves with the best number. */
  holdSealing(): Promise<number>;
  /** Sealing goes on; resolves with the best block number. */
  resumeSealing(): Promise<number>;
  /**
   * Reorganises the best chain: the last `depth` (1–3) blocks, none finalized, are retracted and a branch one block
   * longer becomes best. Their transactions go back to the pool, or are all dropped with `dropRetracted`. Resolves
   * with the new best hash, the retracted hashes and the new branch's.
   */
  reorg(depth: number, options?: { dropRetracted?: boolean }): Promise<ReorgAnswer>;
  /**
   * Upgrades the runtime from v2.0.1 (spec 189) to v2.1.0-rc2 (spec 191) at block `at` (the next block when
   * omitted); resolves with that block and the new spec version. Building the new metadata takes seconds.
   */
  upgradeRuntime(at?: number): Promise<{ at: number; specVersion: number }>;
}

/** What `dev_reorg` answers: block hashes, the branches oldest first. */
export interface ReorgAnswer {
  best: string;
  retracted: string[];
  enacted: string[];
}

/** The control RPCs of the devchain at `url` (its ws:// or http:// address), called over HTTP. */
export function devchainControl(url: string): DevchainControl {
  const endpoint = url.replace(/^ws/, 'http');
  const call = async <T>(method: string, params: unknown[] = [], timeoutMs = 10_000): Promise<T> => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await response.json()) as { result?: T; error?: { message: string } };
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result as T;
  };
  return {
    stallFinality: (at) => call('dev_stallFinality', at === undefined ? [] : [at]),
    resumeFinality: () => call('dev_resumeFinality'),
    silenceSubscriptions: () => call('dev_silenceSubscriptions'),
    holdSealing: () => call('dev_holdSealing'),
    resumeSealing: () => call('dev_resumeSealing'),
    reorg: (depth, options) => call('dev_reorg', options === undefined ? [depth] : [depth, options]),
    upgradeRuntime: (at) => call('dev_upgradeRuntime', at === undefined ? [] : [at], 120_000),
  };
}
