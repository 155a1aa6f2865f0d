import { bullJobId } from '@frequency-gateway/platform';
import { z } from 'zod';

/** One webhook to deliver: POSTed as JSON to `url`; `id` is its identity (the same id is delivered once). */
export interface Delivery {
  id: string;
  url: string;
  /** What happened, for logs and the queue board (job name). */
  event: string;
  body: unknown;
}

/** What the queue keeps of a delivery: the body already serialized, so every attempt sends the same bytes. */
export interface WebhookJob {
  id: string;
  url: string;
  event: string;
  payload: string;
}

export class InvalidDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDeliveryError';
  }
}

const deliveryShape = z.object({
  id: z.string().min(1).max(512),
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  event: z.string().min(1).max(200),
});

/** JSON text of a body; bigints become decimal strings. */
export function serializeBody(body: unknown): string {
  const text = JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  if (text === undefined) throw new InvalidDeliveryError('body: must be a JSON value');
  return text;
}

/** The job data of a delivery, or InvalidDeliveryError naming every problem. */
export function webhookJob(delivery: Delivery): WebhookJob {
  const parsed = deliveryShape.safeParse(delivery);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new InvalidDeliveryError(`invalid webhook delivery ${JSON.stringify(delivery.id)}: ${problems.join('; ')}`);
  }
  return { ...parsed.data, payload: serializeBody(delivery.body) };
}

/** The BullMQ job id of a delivery id: itself, unless BullMQ would refuse it (see bullJobId). */
export const deliveryJobId = (id: string): string => bullJobId(id);
