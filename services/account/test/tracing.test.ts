import { cryptoWaitReady } from '@polkadot/util-crypto';
import { ancestryOf, startOtlpReceiver, traceBehind, type OtlpReceiver } from '@frequency-gateway/devstack';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { startAccountStack, type AccountStack } from './support/stack.js';

let collector: OtlpReceiver;
let stack: AccountStack;
const workerLogs: string[] = [];

beforeAll(async () => {
  await cryptoWaitReady();
  collector = await startOtlpReceiver();
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, LOG_LEVEL: 'info' };
  stack = await startAccountStack({ apiEnv: tracing, workerEnv: tracing, workerLogs });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await collector?.stop();
});

describe('tracing, with OTEL_EXPORTER_OTLP_ENDPOINT set on the api and the worker', () => {
  test('a SIWF sign-up is one trace from the request to the webhook, whose receiver gets its traceparent', async () => {
    const user = SiwfUser.create('sr25519');
    const answer = await stack.call('POST', '/v2/accounts/siwf', {
      authorizationPayload: encodeAuthorizationPayload(await stack.signUpOf(user)),
    });
    expect(answer.status).toBe(200);
    const referenceId = answer.body.signUpReferenceId as string;
    await stack.webhookOf(referenceId);
    const delivery = stack.receiver.received.find(
      (received) => (received.body as { referenceId?: string }).referenceId === referenceId,
    )!;
    // One trace from the webhook's sender up to the request; the receiver got its traceparent.
    const { traceId, path, spans: trace } = await traceBehind(collector, delivery.headers.traceparent);
    expect(path).toEqual([
      'account-worker: POST',
      'account-worker: webhookQueue process',
      'account-worker: chain finalization',
      'account-worker: chain submit',
      'account-worker: transactionPublish process',
      'account-api: POST /v2/accounts/siwf',
    ]);
    const root = trace.find((span) => span.parentSpanId === undefined)!;
    expect(root).toMatchObject({ service: 'account-api', kind: 2 });
    expect(root.attributes).toMatchObject({ 'http.route': '/v2/accounts/siwf', 'http.response.status_code': 200 });
    // Every span of the trace hangs from that root, and none failed.
    for (const span of trace) expect(ancestryOf(trace, span.spanId).at(-1)).toBe('account-api: POST /v2/accounts/siwf');
    expect(trace.filter((span) => span.statusCode === 2)).toEqual([]);
    const finalization = trace.find((span) => span.name === 'chain finalization')!;
    expect(finalization.attributes['chain.outcome']).toBe('succeeded');

    // The worker's log lines inside the trace name it.
    const lines = workerLogs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const submitted = lines.find((line) => line.msg === 'transaction submitted' && line.referenceId === referenceId);
    expect(submitted).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
  }, 120_000);
});
