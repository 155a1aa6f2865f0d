import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { waitUntil } from './processes.js';

/** One span as an OTLP exporter sent it, with the service that sent it. */
export interface ReceivedSpan {
  /** `service.name` of the exporting process's resource. */
  service: string;
  traceId: string;
  spanId: string;
  /** Absent for a trace's root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  startNs: bigint;
  endNs: bigint;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The spans this one links to (work done for them elsewhere, in other traces). */
  links: { traceId: string; spanId: string }[];
}

export interface OtlpReceiver {
  /** What a component's OTEL_EXPORTER_OTLP_ENDPOINT is set to (the receiver answers `<url>/v1/traces`). */
  url: string;
  /** Every span so far, in order of arrival. */
  spans: ReceivedSpan[];
  stop(): Promise<void>;
}

/** An OTLP/JSON value: the one of its fields that is set. */
const anyValue = z
  .object({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    doubleValue: z.number().optional(),
  })
  .loose();

const keyValues = z.array(z.object({ key: z.string(), value: anyValue })).default([]);

const exportRequest = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: keyValues }).optional(),
        scopeSpans: z
          .array(
            z.object({
              spans: z
                .array(
                  z.object({
                    traceId: z.string().regex(/^[0-9a-f]{32}$/),
                    spanId: z.string().regex(/^[0-9a-f]{16}$/),
                    parentSpanId: z.string().optional(),
                    name: z.string(),
                    kind: z.number().int().default(0),
                    startTimeUnixNano: z.union([z.string(), z.number()]),
                    endTimeUnixNano: z.union([z.string(), z.number()]),
                    attributes: keyValues,
                    status: z
                      .object({ code: z.number().int().default(0) })
                      .loose()
                      .optional(),
                    links: z.array(z.object({ traceId: z.string(), spanId: z.string() }).loose()).default([]),
                  }),
                )
                .default([]),
            }),
          )
          .default([]),
      }),
    )
    .default([]),
});

function valueOf(value: z.infer<typeof anyValue>): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return '';
}

const attributesOf = (list: z.infer<typeof keyValues>) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

/** The spans of an OTLP/HTTP JSON export request (ExportTraceServiceRequest). */
export function spansOfExport(body: unknown): ReceivedSpan[] {
  const parsed = exportRequest.parse(body);
  return parsed.resourceSpans.flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes ?? [])['service.name'] ?? '');
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ? span.parentSpanId : undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        startNs: BigInt(span.startTimeUnixNano),
        endNs: BigInt(span.endTimeUnixNano),
        statusCode: span.status?.code ?? 0,
        links: span.links.map(({ traceId, spanId }) => ({ traceId, spanId })),
      })),
    );
  });
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/**
 * An OpenTelemetry collector stand-in on 127.0.0.1: takes OTLP/HTTP trace exports with JSON bodies at
 * `/v1/traces`, keeps their spans, and answers 400 to anything it cannot decode (protobuf included), so a
 * component exporting in another form fails loudly rather than silently.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    bodyOf(request)
      .then((body) => {
        if (!String(request.headers['content-type']).startsWith('application/json'))
          throw new Error(`not JSON: ${request.headers['content-type']}`);
        spans.push(...spansOfExport(JSON.parse(body.toString('utf8'))));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      })
      .catch((error: unknown) => {
        response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The trace id and parent span id a `traceparent` header names (W3C trace context, version 00). */
export function parseTraceparent(header: string | undefined): { traceId: string; parentSpanId: string } | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(header ?? '');
  return match ? { traceId: match[1] as string, parentSpanId: match[2] as string } : undefined;
}

/**
 * The path from a span up to its trace's root, as `service: name` steps (the span first), or an error naming
 * the first parent that never arrived: a trace is connected when every span's chain of parents reaches the root.
 */
export function ancestryOf(spans: readonly ReceivedSpan[], spanId: string): string[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const path: string[] = [];
  let current = byId.get(spanId);
  if (!current) throw new Error(`span ${spanId} was not received`);
  for (;;) {
    path.push(`${current.service}: ${current.name}`);
    if (current.parentSpanId === undefined) return path;
    const parent = byId.get(current.parentSpanId);
    if (!parent) throw new Error(`the parent ${current.parentSpanId} of ${path.at(-1)} was not received`);
    current = parent;
  }
}

/** The trace a request continued, as far as the spans have arrived. */
export interface ReceivedTrace {
  traceId: string;
  /** From the span that sent the request up to the trace's root, as `service: name` steps. */
  path: string[];
  /** Every span of the trace received so far. */
  spans: ReceivedSpan[];
}

/**
 * The trace behind a request that carried `traceparent` (a webhook a component sent): waits until the span that
 * sent it and each of its ancestors up to the root have arrived (components export in batches), for at most
 * `timeoutMs`. Fails at once when the request carried no valid `traceparent`.
 */
export async function traceBehind(
  receiver: OtlpReceiver,
  traceparent: string | undefined,
  timeoutMs = 20_000,
): Promise<ReceivedTrace> {
  const sent = parseTraceparent(traceparent);
  if (!sent) throw new Error(`the request carried no valid traceparent (${String(traceparent)})`);
  const path = await waitUntil(
    async () => {
      try {
        return ancestryOf(receiver.spans, sent.parentSpanId);
      } catch {
        return undefined;
      }
    },
    timeoutMs,
    () => `the spans from ${sent.parentSpanId} up to the root of trace ${sent.traceId}`,
  );
  return { traceId: sent.traceId, path, spans: receiver.spans.filter((span) => span.traceId === sent.traceId) };
}
