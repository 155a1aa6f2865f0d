export * from './config.js';
export { deliveryJobId, InvalidDeliveryError, serializeBody, type Delivery, type WebhookJob } from './delivery.js';
export { webhookMetrics, type DeliveryOutcome, type WebhookMetrics } from './metrics.js';
export { AttemptFailure, receiverTarget, type ReceiverTarget } from './receiverRequest.js';
export { parseRetryAfter, retryDelay } from './retryDelay.js';
export { signWebhook, verifyWebhook, webhookHeaders } from './signature.js';
export * from './webhookDelivery.js';
export * from './transactions.js';
export { deliveredWebhookSpec } from './spec.js';
