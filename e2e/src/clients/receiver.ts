import { waitUntil, type ReceivedWebhook } from '@frequency-gateway/devstack';
import { verifyWebhook } from '@frequency-gateway/webhooks';

/** One request the receiver got; its body `{}` when it is not a JSON object. */
export interface Delivery extends ReceivedWebhook {
  body: Record<string, unknown>;
}

/**
 * What a webhook receiver (devstack's `startWebhookReceiver`, in this process or as `webhookReceiverProgram()` in a
 * container or a Pod) got, read from its `GET /received` at `url` (where the tests reach it); `destination(path)` is
 * a URL of it as the gateway's components reach it. Deliveries are fetched once each and kept here.
 */
export class ReceivedWebhooks {
  private readonly seen: Delivery[] = [];
  private current: string;

  constructor(
    url: string,
    private readonly base: string,
  ) {
    this.current = url;
  }

  /** Where the tests reach the receiver. */
  get url(): string {
    return this.current;
  }

  /** The receiver is reached at `url` from now on (a container started again is published on a new port). */
  movedTo(url: string): void {
    this.current = url;
  }

  /** A URL of the receiver as the components reach it. */
  destination(path: string): string {
    return `${this.base}${path}`;
  }

  /** Resolves once the receiver answers at `url`. */
  async answering(timeoutMs = 30_000): Promise<void> {
    await waitUntil(
      async () => (await fetch(`${this.url}/healthz`).catch(() => undefined))?.ok === true,
      timeoutMs,
      `the webhook receiver at ${this.url}`,
    );
  }

  /** Every request so far, in order of arrival. */
  async deliveries(): Promise<Delivery[]> {
    const answer = (await (await fetch(`${this.url}/received?from=${this.seen.length}`)).json()) as {
      deliveries: ReceivedWebhook[];
    };
    for (const delivery of answer.deliveries) {
      const body = typeof delivery.body === 'object' && delivery.body !== null ? delivery.body : {};
      this.seen.push({ ...delivery, body: body as Record<string, unknown> });
    }
    return [...this.seen];
  }

  /** The requests under a path so far. */
  async at(path: string): Promise<Delivery[]> {
    return (await this.deliveries()).filter((delivery) => delivery.path === path);
  }

  /** Waits for the transaction notification of a request at `path`; fails on a second one or a bad signature. */
  async notificationOf(path: string, referenceId: string, secret: string, timeoutMs = 120_000): Promise<Delivery> {
    const mine = async () => (await this.at(path)).filter((delivery) => delivery.body.referenceId === referenceId);
    // The deliveries the wait saw: no second read, which a receiver reached through a NodePort may refuse for a moment.
    const found = await waitUntil(
      async () => {
        const deliveries = await mine();
        return deliveries.length > 0 && deliveries;
      },
      timeoutMs,
      `the webhook of ${referenceId} at ${path}`,
    );
    if (found.length !== 1) throw new Error(`${found.length} webhooks for ${referenceId} at ${path}`);
    if (!verifyWebhook(secret, found[0]!.headers, found[0]!.raw))
      throw new Error(`the webhook of ${referenceId} is not signed with the gateway's WEBHOOK_SECRET`);
    return found[0]!;
  }
}
