import {
  ancestryOf,
  callJson,
  type OtlpReceiver,
  startOtlpReceiver,
  startWebhookReceiver,
  traceBehind,
  waitUntil,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { startPipeline, type PipelineStack } from './support/pipeline.js';

describe('tracing, with OTEL_EXPORTER_OTLP_ENDPOINT set on the api and the worker', () => {
  let collector: OtlpReceiver;
  let receiver: WebhookReceiver;
  let stack: PipelineStack;
  const workerLogs: string[] = [];
  const apiLogs: string[] = [];

  beforeAll(async () => {
    [collector, receiver] = await Promise.all([startOtlpReceiver(), startWebhookReceiver()]);
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, LOG_LEVEL: 'info' };
    stack = await startPipeline({
      apiEnv: tracing,
      // Long enough that two broadcasts posted together share a batch.
      workerEnv: { ...tracing, WEBHOOK_BASE_URL: receiver.url, BATCH_INTERVAL_SECONDS: '3' },
      workerLogs,
      apiLogs,
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([receiver?.stop(), collector?.stop()]);
  });

  it('a broadcast is one trace from the request through IPFS and the chain to the webhook', async () => {
    const answer = await callJson(stack.api.url, 'POST', '/v1/content/2/broadcast', {
      content: { content: 'traced', published: '2026-11-21T10:00:00.000Z' },
    });
    expect(answer.status).toBe(202);
    const referenceId = answer.body.referenceId as string;
    await waitUntil(
      async () =>
        receiver.received.find((delivery) => (delivery.body as { referenceId?: string }).referenceId === referenceId),
      60_000,
      'the webhook of the broadcast',
    );
    const delivery = receiver.received.find(
      (received) => (received.body as { referenceId?: string }).referenceId === referenceId,
    )!;
    // One trace from the webhook's sender up to the request; the receiver got its traceparent.
    const { traceId, path, spans: trace } = await traceBehind(collector, delivery.headers.traceparent);
    expect(path).toEqual([
      'content-publishing-worker: POST',
      'content-publishing-worker: webhookQueue process',
      'content-publishing-worker: chain finalization',
      'content-publishing-worker: chain submit',
      'content-publishing-worker: publishQueue process',
      'content-publishing-worker: batchQueue process',
      'content-publishing-worker: requestQueue process',
      'content-publishing-api: POST /v1/content/{msaId}/broadcast',
    ]);
    const root = 'content-publishing-api: POST /v1/content/{msaId}/broadcast';
    for (const span of trace) expect(ancestryOf(trace, span.spanId).at(-1)).toBe(root);
    expect(trace.filter((span) => span.statusCode === 2)).toEqual([]);
    // The batch file went to Kubo inside the batch's job, as a client span of it.
    const batchJob = trace.find((span) => span.name === 'batchQueue process')!;
    expect(trace.filter((span) => span.name === 'ipfs add' && span.parentSpanId === batchJob.spanId)).not.toEqual([]);
    expect(trace.find((span) => span.name === 'chain finalization')!.attributes['chain.outcome']).toBe('succeeded');

    // Log lines written inside the trace name it: the api's access line, the worker's lines of its jobs.
    const inTrace = (lines: string[]) =>
      lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.trace_id === traceId);
    expect(inTrace(apiLogs)).toContainEqual(
      expect.objectContaining({
        msg: 'request',
        route: '/v1/content/{msaId}/broadcast',
        span_id: trace.find((span) => span.parentSpanId === undefined)!.spanId,
      }),
    );
    const spanIds = new Set(trace.map((span) => span.spanId));
    const workerLines = inTrace(workerLogs);
    expect(workerLines).not.toEqual([]);
    for (const line of workerLines) expect(spanIds.has(line.span_id as string)).toBe(true);
  }, 120_000);

  it("a batch's span links to every member request's span: a second broadcast of the batch reaches it", async () => {
    const since = BigInt(Date.now()) * 1_000_000n;
    const answers = await Promise.all(
      ['first', 'second'].map((content) =>
        callJson(stack.api.url, 'POST', '/v1/content/2/broadcast', {
          content: { content: `linked ${content}`, published: '2026-11-21T10:00:00.000Z' },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    const referenceIds = answers.map((answer) => answer.body.referenceId as string);
    const deliveries = await waitUntil(
      async () => {
        const found = referenceIds.map((referenceId) =>
          receiver.received.find((delivery) => (delivery.body as { referenceId?: string }).referenceId === referenceId),
        );
        return found.every((delivery) => delivery !== undefined) && found;
      },
      60_000,
      'the webhooks of both broadcasts',
    );
    // One batch, so one trace behind both webhooks: the trace of the request that opened the batch.
    const behind = await Promise.all(
      deliveries.map((delivery) => traceBehind(collector, delivery!.headers.traceparent)),
    );
    expect(behind[1]!.traceId).toBe(behind[0]!.traceId);
    const batchJob = behind[0]!.spans.find((span) => span.name === 'batchQueue process')!;

    // Each request's own job span (the first of its trace in the worker), the member's and the opener's alike.
    const requestJobs = await waitUntil(
      async () => {
        const jobs = collector.spans.filter((span) => span.name === 'requestQueue process' && span.startNs >= since);
        return jobs.length === 2 && jobs;
      },
      20_000,
      "both requests' job spans exported",
    );
    const member = requestJobs.find((span) => span.traceId !== batchJob.traceId);
    expect(member).toBeDefined();
    // The member's trace stops at its request job; the batch's span links back to it, and to the opener's.
    const requestSpans = requestJobs.map(({ traceId, spanId }) => ({ traceId, spanId }));
    expect(batchJob.links).toEqual(expect.arrayContaining(requestSpans));
    // So does the publication of the batch.
    const publishJob = behind[0]!.spans.find((span) => span.name === 'publishQueue process')!;
    expect(publishJob.links).toEqual(expect.arrayContaining(requestSpans));
    expect(ancestryOf(collector.spans, member!.spanId).at(-1)).toBe(
      'content-publishing-api: POST /v1/content/{msaId}/broadcast',
    );
  }, 120_000);
});
