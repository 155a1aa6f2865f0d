/**
 * Answers to historic calls (the ones naming a block hash, which WsProvider calls cacheable), each kept for `ttlMs`
 * from when it was asked, at most `capacity` of them, the oldest going first; a call in flight is shared. WsProvider
 * keeps these itself, but keeps a failure as well and renews it on every access: a call cut off by a lost node then
 * fails for good for a caller that asks it again more often than every 30 s (the tracker's scan of a block did,
 * stalling every outcome). Here a failure is forgotten at once, so the next ask goes to the node in use.
 */
export class AnswerCache {
  private readonly answers = new Map<string, { until: number; answer: Promise<unknown> }>();

  constructor(
    private readonly capacity = 1_024,
    private readonly ttlMs = 30_000,
  ) {}

  get<T>(key: string, ask: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const kept = this.answers.get(key);
    if (kept && kept.until > now) return kept.answer as Promise<T>;
    const answer = ask();
    this.answers.delete(key);
    this.answers.set(key, { until: now + this.ttlMs, answer });
    answer.catch(() => {
      if (this.answers.get(key)?.answer === answer) this.answers.delete(key);
    });
    if (this.answers.size > this.capacity) this.answers.delete(this.answers.keys().next().value as string);
    return answer;
  }
}
