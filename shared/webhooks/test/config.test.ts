import { parseConfig } from '@frequency-gateway/platform';
import { deliveryJobId, parseRetryAfter, retryDelay, webhookSettings, webhookVariables } from '../src/index.js';

describe('webhook configuration', () => {
  it('defaults every variable and leaves deliveries unsigned without WEBHOOK_SECRET', () => {
    const settings = webhookSettings(parseConfig(webhookVariables(), {}));
    expect(settings).toEqual({
      maxAttempts: 12,
      retryBaseMs: 1000,
      retryMaxMs: 600_000,
      timeoutMs: 10_000,
      concurrency: 20,
    });
  });

  it('reads the variables from the environment', () => {
    const config = parseConfig(webhookVariables(), {
      WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_RETRY_BASE_MS: '250',
      WEBHOOK_RETRY_MAX_MS: '60000',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_CONCURRENCY: '50',
    });
    expect(webhookSettings(config)).toEqual({
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      maxAttempts: 3,
      retryBaseMs: 250,
      retryMaxMs: 60_000,
      timeoutMs: 5_000,
      concurrency: 50,
    });
    expect(webhookVariables().WEBHOOK_SECRET.secret).toBe(true);
  });

  it('reports every value out of range at once, and never shows the secret', () => {
    const problems = (() => {
      try {
        parseConfig(webhookVariables(), {
          WEBHOOK_SECRET: 'short-secret',
          WEBHOOK_MAX_ATTEMPTS: '0',
          WEBHOOK_RETRY_BASE_MS: '99',
          WEBHOOK_TIMEOUT_MS: '1.5',
          WEBHOOK_CONCURRENCY: '501',
        });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    for (const name of [
      'WEBHOOK_SECRET',
      'WEBHOOK_MAX_ATTEMPTS',
      'WEBHOOK_RETRY_BASE_MS',
      'WEBHOOK_TIMEOUT_MS',
      'WEBHOOK_CONCURRENCY',
    ]) {
      expect(problems).toContain(name);
    }
    expect(problems).not.toContain('short-secret');
    expect(() => parseConfig(webhookVariables(), { WEBHOOK_SECRET: 'whsec_not base64 at all!' })).toThrow(
      /after whsec_ must come base64/,
    );
  });
});

describe('retry delays', () => {
  const settings = { retryBaseMs: 1000, retryMaxMs: 600_000 };

  it('double at each attempt within ±10 % jitter', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelay(attempt, settings, undefined, () => 0.5))).toEqual([
      1000, 2000, 4000, 8000,
    ]);
    expect(retryDelay(3, settings, undefined, () => 0)).toBe(3600);
    expect(retryDelay(3, settings, undefined, () => 1)).toBe(4400);
    const spread = Array.from({ length: 200 }, () => retryDelay(2, settings));
    expect(Math.min(...spread)).toBeGreaterThanOrEqual(1800);
    expect(Math.max(...spread)).toBeLessThanOrEqual(2200);
    expect(new Set(spread).size).toBeGreaterThan(10);
  });

  it('never exceed retryMaxMs, also when the receiver asks for longer', () => {
    expect(retryDelay(30, settings, undefined, () => 1)).toBe(600_000);
    expect(retryDelay(1, settings, 3_600_000)).toBe(600_000);
    expect(retryDelay(5, settings, 2_000)).toBe(2_000);
  });

  it('read Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('delivery job ids', () => {
  it('are the delivery id unless BullMQ would refuse it, and stay one-to-one', () => {
    const expected = {
      'tx-0xabc-1': 'tx-0xabc-1',
      'tx:0xabc:1': 'tx%3A0xabc%3A1',
      'tx%3A0xabc%3A1': 'tx%253A0xabc%253A1',
      '42': '%342',
      '-7': '%2D7',
      '42a': '42a',
    };
    expect(Object.fromEntries(Object.keys(expected).map((id) => [id, deliveryJobId(id)]))).toEqual(expected);
    const ids = ['a:b', 'a%3Ab', 'a%253Ab', '1', '%31', '%2531', ':', '%3A'];
    expect(new Set(ids.map(deliveryJobId)).size).toBe(ids.length);
  });
});
