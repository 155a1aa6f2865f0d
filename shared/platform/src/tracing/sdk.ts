import { trace } from '@opentelemetry/api';
import { redactUrl } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { markTracingOn } from './spans.js';

export interface TracingSettings {
  /** OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT); spans go to `<endpoint>/v1/traces`. Unset: tracing off. */
  endpoint: string | undefined;
  /** `service.name` of every span: the component (`account-api`). */
  serviceName: string;
  serviceVersion: string;
  logger: Logger;
}

export interface Tracing {
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on when an endpoint is set: the SDK is loaded only then (an import on demand), so a component
 * without one runs OpenTelemetry's API alone, whose tracer is a no-op. Spans are batched and exported as
 * OTLP/HTTP with JSON bodies; W3C trace context is the propagation format; the active span follows async
 * work through AsyncLocalStorage. One provider per process: a second start (tests running several components
 * in one process) keeps the first.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing | undefined> {
  if (!settings.endpoint) return undefined;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, core, hooks] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  const { context, propagation } = await import('@opentelemetry/api');
  const url = `${settings.endpoint.replace(/\/+$/, '')}/v1/traces`;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': settings.serviceVersion,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 1_000 })],
  });
  if (!trace.setGlobalTracerProvider(provider)) {
    settings.logger.warn('a tracer provider was already registered in this process; it is kept');
    await provider.shutdown();
    return undefined;
  }
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  markTracingOn();
  settings.logger.info({ traces: redactUrl(url) }, 'tracing on: spans exported over OTLP/HTTP');
  return {
    shutdown: async () => {
      await provider
        .forceFlush()
        .catch((error: unknown) => settings.logger.warn({ err: error }, 'could not export spans'));
      await provider.shutdown();
    },
  };
}
