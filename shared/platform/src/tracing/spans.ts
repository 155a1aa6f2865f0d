import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export { SpanKind } from '@opentelemetry/api';
export type { Attributes, Span } from '@opentelemetry/api';

/**
 * The W3C trace context of a span, as it travels between processes: in an HTTP header, in a job's data, in a
 * Redis record. Without tracing on, nothing is ever carried.
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** Where a job's data carries the trace context of the span that queued it. */
export const TRACE_CONTEXT_FIELD = '_traceContext';

const TRACER_NAME = 'frequency-gateway';

/**
 * Whether startTracing registered the SDK in this process. Off, the helpers below skip even OpenTelemetry's no-op
 * tracer: a job or a request pays one branch, not a span object and a context switch (about 6 µs measured).
 */
let tracingOn = false;
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Called by startTracing once the SDK is registered. */
export function markTracingOn(): void {
  tracingOn = true;
}

const getter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
};

/** The context a carrier (or HTTP headers) names as parent; the root context when it names none. */
export function contextFrom(carrier: Readonly<Record<string, unknown>> | undefined): Context {
  if (!carrier) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, getter);
}

/** The trace context of the active span, or undefined outside one (and always with tracing off). */
export function currentTraceCarrier(): TraceCarrier | undefined {
  if (!tracingOn || !trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const { traceparent, tracestate } = carrier;
  if (!traceparent) return undefined;
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The ids a log line carries inside a span (OpenTelemetry's log field names). */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent when it comes from elsewhere (a job, a record); the active span by default. */
  parent?: TraceCarrier | Context;
  /** When the span began, if before now (a transaction's finalization began at its submission). */
  startTime?: number;
  /** Errors that end the work without failing it (a job put back to wait). */
  notFailure?: (error: unknown) => boolean;
}

function parentContext(parent: SpanOptions['parent']): Context {
  if (parent === undefined) return context.active();
  if ('traceparent' in parent) return contextFrom(parent as unknown as Record<string, unknown>);
  return parent;
}

/** Starts a span without making it active (for work whose end is told by an event, as an HTTP response's). */
export function startSpan(name: string, options: SpanOptions = {}): { span: Span; context: Context } {
  const parent = parentContext(options.parent);
  const span = trace.getTracer(TRACER_NAME).startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Marks a span failed with the error that failed it. */
export function recordFailure(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `work` inside a new span (active for everything it awaits), which ends with its outcome: an error
 * thrown marks it failed. With tracing off `work` runs as it is, given a span that records nothing.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  if (!tracingOn) return work(NO_SPAN);
  const { span, context: active } = startSpan(name, options);
  try {
    return await context.with(active, () => work(span));
  } catch (error) {
    if (!options.notFailure?.(error)) recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Links the active span to the spans the carriers name (work done for many requests at once, as a batch of them,
 * belongs to the trace of one; each other request's trace reaches it through its link). Carriers that name no
 * valid span are left out; outside a span, or with tracing off, nothing happens.
 */
export function linkActiveSpan(carriers: readonly TraceCarrier[]): void {
  if (!tracingOn) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  const links = carriers.flatMap((carrier) => {
    const linked = trace.getSpanContext(contextFrom(carrier as unknown as Record<string, unknown>));
    return linked && trace.isSpanContextValid(linked) ? [{ context: linked }] : [];
  });
  if (links.length > 0) span.addLinks(links);
}

/** Runs `work` with `active` as the current context (a span started with startSpan). */
export function withContext<T>(active: Context, work: () => T): T {
  return context.with(active, work);
}

/** Binds an event emitter's listeners to a context, so that what they run belongs to its span. */
export function bindEmitter<E extends NodeJS.EventEmitter>(active: Context, emitter: E): E {
  return context.bind(active, emitter);
}

/** Headers naming the active span as parent (`traceparent`, `tracestate`) for an outgoing request. */
export function traceHeaders(): Record<string, string> {
  return { ...currentTraceCarrier() };
}

/** Job data with the active span's trace context added (unchanged outside a span, or when not an object). */
export function withTraceContext<T>(data: T): T {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  if (TRACE_CONTEXT_FIELD in data) return data;
  const carrier = currentTraceCarrier();
  return carrier ? { ...data, [TRACE_CONTEXT_FIELD]: carrier } : data;
}

/** Takes the trace context out of a job's data: the data as the job's producer meant it, and the carrier. */
export function takeTraceContext(data: unknown): { data: unknown; carrier: TraceCarrier | undefined } {
  if (data === null || typeof data !== 'object' || !(TRACE_CONTEXT_FIELD in data)) return { data, carrier: undefined };
  const { [TRACE_CONTEXT_FIELD]: carried, ...rest } = data as Record<string, unknown>;
  const carrier =
    typeof carried === 'object' && carried !== null && typeof (carried as TraceCarrier).traceparent === 'string'
      ? (carried as TraceCarrier)
      : undefined;
  return { data: rest, carrier };
}
