/** What one item of a batch came to: its value, or the error that item alone failed with. */
export type ItemOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the items submitted during one turn of the event loop and serves them with one call of `run`.
 * Requests that arrive together (the HTTP parser hands over every socket that became readable before the
 * loop turns) then share their Redis work: a script over many keys, a pipeline of many jobs, one write out
 * and one read back, instead of a round trip each. A batch is sent early when it reaches `maxItems`.
 *
 * `run` answers one outcome per item, in order; when it throws, every item of the batch fails with its error.
 */
export class TurnBatch<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<ItemOutcome<O>[]>,
    private readonly maxItems = 256,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.maxItems) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    const settle = (outcomes: ItemOutcome<O>[]) => {
      batch.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (!outcome) entry.reject(new Error('the batch answered fewer outcomes than it had items'));
        else if (outcome.ok) entry.resolve(outcome.value);
        else entry.reject(outcome.error);
      });
    };
    const items = batch.map((entry) => entry.item);
    Promise.resolve()
      .then(() => this.run(items))
      .then(settle, (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      });
  }
}
