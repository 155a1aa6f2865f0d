import type { WebhookSpec } from '@frequency-gateway/platform';

/**
 * A webhook sent through WebhookDelivery, as an OpenAPI document publishes it: `sentWhen` says what one
 * delivery is; how deliveries are retried, kept and signed is the same for every such webhook.
 */
export function deliveredWebhookSpec(
  spec: Omit<WebhookSpec, 'description' | 'responses'> & { sentWhen: string },
): WebhookSpec {
  const { sentWhen, ...rest } = spec;
  return {
    ...rest,
    description: `${sentWhen}, from a durable queue: retried with exponential backoff until a 2xx, then kept as a dead letter (visible at /queues and in webhook_deliveries_total). With WEBHOOK_SECRET set, each delivery is signed: \`webhook-id\` (the same on every attempt, so a receiver can drop repeats), \`webhook-timestamp\` and \`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\`.`,
    responses: {
      200: { description: 'Received (any 2xx)' },
      410: { description: 'Any other status is retried' },
    },
  };
}
