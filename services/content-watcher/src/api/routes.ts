import { createHash } from 'node:crypto';
import {
  bullJobId,
  defineRoute,
  notFound,
  outboundUrl,
  shownUrl,
  type JobQueues,
  type OutboundPolicy,
  type Route,
} from '@frequency-gateway/platform';
import { z } from 'zod';
import type { SearchJob } from '../jobs.js';
import { CONTENT_WATCHER_QUEUES } from '../queues.js';
import { webhookRegistration, webhookUrl, type WebhookRegistry } from '../registrations.js';
import { resetRequest, watchOptions, type ScannerControl } from '../scannerControl.js';
import { strictObject } from '../strictObject.js';

const statusBody = z.object({ status: z.number().int() }).meta({ id: 'StatusResponseDto' });

const BAD_BODY =
  'A field missing or invalid, an unknown field, or a URL whose destination the outbound policy refuses (OUTBOUND_POLICY, OUTBOUND_ALLOWED_DESTINATIONS); the message names each field and problem';

/** POST, GET and DELETE /v1/webhooks: who receives which announcement types. */
export function webhookRoutes(registry: WebhookRegistry, policy: OutboundPolicy): Route[] {
  const registration = webhookRegistration(policy);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'WebhookControllerV1_registerWebhook_v1',
      summary: 'Register a URL for announcement types',
      description:
        'Adds the URL to each type (registering again adds types; a URL is never registered twice for a type). Announcements found from then on are POSTed to it. Loopback, private, link-local and other non-public destinations are refused unless OUTBOUND_ALLOWED_DESTINATIONS opens them; a hostname is judged again, by its addresses, at each delivery.',
      tags: ['webhooks'],
      body: registration,
      responses: {
        201: { description: 'Registered', schema: statusBody },
        400: { description: BAD_BODY },
      },
      handler: async ({ body }) => {
        await registry.register(body);
        return { status: 201, body: { status: 200 } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'WebhookControllerV1_getRegisteredWebhooks_v1',
      summary: 'Every registered URL with its announcement types',
      description: 'Credentials in a URL are shown masked (`https://***@host/path`); they are kept and used as given.',
      tags: ['webhooks'],
      responses: {
        200: {
          description: 'The registrations',
          schema: z
            .object({ status: z.number().int(), registeredWebhooks: z.array(registration) })
            .meta({ id: 'WebhookRegistrationResponseDto' }),
        },
      },
      handler: async () => {
        const registrations = await registry.list();
        const registeredWebhooks = registrations.map(({ url, announcementTypes }) => ({
          url: shownUrl(url),
          announcementTypes,
        }));
        return { status: 200, body: { status: 200, registeredWebhooks } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhooks',
      operationId: 'WebhookControllerV1_clearAllWebHooks_v1',
      summary: 'Remove every registration, or one URL with ?url=',
      description: 'A URL is named as it was registered, credentials included; a refused destination can be removed.',
      tags: ['webhooks'],
      query: z.object({ url: webhookUrl.optional().meta({ description: 'Only this URL (unset: every one)' }) }),
      responses: {
        200: { description: 'Removed', schema: statusBody },
        400: { description: 'A bad URL' },
      },
      handler: async ({ query }) => {
        await registry.clear(query.url);
        return { status: 200, body: { status: 200 } };
      },
    }),
  ];
}

/** The scanner's controls: reset, options, pause and start. */
export function scannerRoutes(control: ScannerControl): Route[] {
  const done = { status: 201 };
  return [
    defineRoute({
      method: 'post',
      path: '/v1/scanner/reset',
      operationId: 'ScanControllerV1_resetScanner_v1',
      summary: 'Scan again from a block',
      description:
        'The scanner goes back to blockNumber (unset: the finalized head) minus rewindOffset, at least block 1, and resumes if paused. Announcements already delivered to a URL are not delivered to it again.',
      tags: ['scanner'],
      body: resetRequest,
      responses: {
        201: { description: 'The scanner acts on it before its next range' },
        400: { description: 'A bad number or an unknown field; the message names each field and problem' },
      },
      handler: async ({ body }) => {
        await control.requestReset(body);
        return done;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/scanner/options',
      operationId: 'ScanControllerV1_getWatchOptions_v1',
      summary: 'The watch options',
      tags: ['scanner'],
      responses: { 200: { description: 'The options', schema: watchOptions }, 404: { description: 'None set' } },
      handler: async () => {
        const options = await control.options();
        if (!options) throw notFound('no watch options are set');
        return { status: 200, body: options };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/scanner/options',
      operationId: 'ScanControllerV1_setWatchOptions_v1',
      summary: 'Set the watch options',
      description:
        'Replaces them: the intents the scanner reads (unset: the DSNP announcement intents) and the users whose announcements are delivered (unset: everyone). They apply from the next range scanned.',
      tags: ['scanner'],
      body: watchOptions,
      responses: {
        201: { description: 'Set' },
        400: { description: 'A bad or repeated id, or an unknown field; the message names each field and problem' },
      },
      handler: async ({ body }) => {
        await control.setOptions(body);
        return done;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/scanner/pause',
      operationId: 'ScanControllerV1_pauseScanner_v1',
      summary: 'Pause the scanner (every replica; it stays paused across restarts)',
      tags: ['scanner'],
      responses: { 201: { description: 'Paused' } },
      handler: async () => {
        await control.pause();
        return done;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/scanner/start',
      operationId: 'ScanControllerV1_startScanner_v1',
      summary: 'Resume the scanner',
      tags: ['scanner'],
      query: z.object({
        immediate: z
          .enum(['true', 'false'])
          .optional()
          .meta({ description: 'Accepted for compatibility: the scanner resumes within one block time either way' }),
      }),
      responses: { 201: { description: 'Resumed' }, 400: { description: 'A bad immediate' } },
      handler: async () => {
        await control.start();
        return done;
      },
    }),
  ];
}

function searchRequest(policy: OutboundPolicy) {
  return strictObject({
    clientReferenceId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Your id for the search (unset: derived from the request); the same id is one search' }),
    upperBoundBlock: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional()
      .meta({ description: 'Last block searched (unset or 0: the finalized head)' }),
    blockCount: z
      .number()
      .int()
      .min(1)
      .max(2 ** 32 - 1)
      .meta({ description: 'How many blocks, back from upperBoundBlock' }),
    filters: watchOptions.optional(),
    webhookUrl: outboundUrl(policy).meta({ description: "Where the search's announcements are POSTed" }),
  }).meta({ id: 'ContentSearchRequestDto' });
}

/** POST /v1/search: crawl past blocks for announcements, delivered to the search's own webhook. */
export function searchRoutes(queues: JobQueues, policy: OutboundPolicy): Route[] {
  const queue = queues.queue<SearchJob>(CONTENT_WATCHER_QUEUES.request);
  return [
    defineRoute({
      method: 'post',
      path: '/v1/search',
      operationId: 'SearchControllerV1_search_v1',
      summary: 'Search past blocks for announcements',
      description:
        "Crawls the blockCount blocks up to upperBoundBlock (or the finalized head) for the filters' intents (unset: the DSNP announcement intents) and POSTs each announcement to webhookUrl with the search's jobId as requestId. The same search while it runs is the same job; once finished, it runs again.",
      tags: ['search'],
      body: searchRequest(policy),
      responses: {
        200: {
          description: 'Queued',
          schema: z.object({ status: z.number().int(), jobId: z.string() }).meta({ id: 'SearchResponseDto' }),
        },
        400: { description: BAD_BODY },
      },
      handler: async ({ body }) => {
        const jobId =
          body.clientReferenceId ?? createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27);
        // Any id a client chooses ("0", "a:b") is a job id BullMQ takes; the client keeps seeing its own.
        const queueJobId = bullJobId(jobId);
        const existing = await queue.getJob(queueJobId);
        if (existing && ((await existing.isCompleted()) || (await existing.isFailed()))) await existing.remove();
        await queue.add(
          `Content Search ${jobId}`,
          {
            requestId: jobId,
            webhookUrl: body.webhookUrl,
            blockCount: body.blockCount,
            ...(body.upperBoundBlock ? { upperBoundBlock: body.upperBoundBlock } : {}),
            ...(body.filters?.intentIds ? { intentIds: body.filters.intentIds } : {}),
            ...(body.filters?.dsnpIds ? { dsnpIds: body.filters.dsnpIds } : {}),
          },
          {
            jobId: queueJobId,
            attempts: 5,
            backoff: { type: 'exponential', delay: 2000 },
            removeOnComplete: { age: 7 * 24 * 3600 },
          },
        );
        return { status: 200, body: { status: 200, jobId } };
      },
    }),
  ];
}
