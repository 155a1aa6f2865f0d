import { z } from 'zod';
import { notFound } from '../http/errors.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RequestSnapshot, RequestStatusStore } from './requestStatusStore.js';

export interface RequestRoutesOptions {
  store: RequestStatusStore;
  /** The record as this service fills it, for the OpenAPI document. */
  recordSchema: z.ZodType;
  /** Aborted when the component shuts down: open event streams end then. */
  signal: AbortSignal;
  /** Comment lines keep idle event streams open through proxies. */
  heartbeatMs?: number;
}

const params = z.object({
  referenceId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a referenceId as returned when the request was accepted'),
});

/**
 * `GET /v1/requests/{referenceId}` (the current state) and `GET /v1/requests/{referenceId}/events` (the same
 * states as server-sent events, ending after a final state), so a front end can follow a request without polling.
 */
export function requestStatusRoutes(options: RequestRoutesOptions): Route[] {
  const { store, signal } = options;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/requests/{referenceId}',
      operationId: 'RequestControllerV1_getRequest_v1',
      summary: 'The current state of an accepted request',
      tags: ['requests'],
      params,
      responses: {
        200: { description: 'The request, its state and what it has led to so far', schema: options.recordSchema },
        404: { description: 'No request with this referenceId (or its record has expired)' },
      },
      handler: async ({ params: { referenceId } }) => {
        const record = await store.get(referenceId);
        if (!record) throw notFound(`referenceId: no request ${referenceId}`);
        return { status: 200, body: record };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/requests/{referenceId}/events',
      operationId: 'RequestControllerV1_getRequestEvents_v1',
      summary: 'The states of an accepted request, as server-sent events',
      description:
        'An `event: state` with the record as JSON is sent at once and on every change; the stream ends after a final state. Each event id is the record version.',
      tags: ['requests'],
      params,
      responses: {
        200: {
          description: 'A text/event-stream of `state` events, ending after a final state',
          contentType: 'text/event-stream',
          // Before OpenAPI 3.2's itemSchema, the schema of an event stream describes one event (as generic
          // tools read it): its `event`, `id` and `data` fields, the data a JSON document.
          schema: z
            .object({
              event: z.literal('state'),
              id: z.string().regex(/^\d+$/).describe('The record version'),
              data: z.string().meta({
                description: 'The record as JSON, as GET /v1/requests/{referenceId} answers it',
                contentMediaType: 'application/json',
              }),
            })
            .meta({
              id: 'RequestStateEvent',
              description:
                'One server-sent event; lines starting with `:` between events keep the stream open and carry nothing',
              example: { event: 'state', id: '1', data: '{"referenceId":"9f2c","state":"queued"}' },
            }),
        },
        404: { description: 'No request with this referenceId' },
      },
      handler: async ({ params: { referenceId } }, { req, res }) => {
        let sent = 0;
        const send = (record: RequestSnapshot) => {
          if (!res.headersSent || res.writableEnded || record.version <= sent) return;
          sent = record.version;
          res.write(`event: state\nid: ${record.version}\ndata: ${JSON.stringify(record)}\n\n`);
          if (store.isFinal(record.state)) res.end();
        };
        // Watch first, then read: a change between the two arrives as an event and is not lost.
        const unwatch = await store.watch(referenceId, send);
        const record = await store.get(referenceId).catch((error: unknown) => (unwatch(), Promise.reject(error)));
        if (!record) {
          unwatch();
          throw notFound(`referenceId: no request ${referenceId}`);
        }
        res.status(200).set({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs).unref();
        const end = () => res.end();
        signal.addEventListener('abort', end, { once: true });
        res.once('close', () => {
          unwatch();
          clearInterval(heartbeat);
          signal.removeEventListener('abort', end);
        });
        req.once('close', end);
        send(record);
        if (signal.aborted) end();
      },
    }),
  ];
}
