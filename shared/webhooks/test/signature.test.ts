import { randomBytes } from 'node:crypto';
import { signWebhook, verifyWebhook, webhookHeaders } from '../src/index.js';

// The published Standard Webhooks reference vector.
const REFERENCE = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const now = () => Math.floor(Date.now() / 1000);

function signed(secret: string, body: string, timestamp = now(), id = 'delivery-1') {
  return { headers: webhookHeaders(secret, id, timestamp, body), body };
}

describe('webhook signatures', () => {
  it('reproduce the Standard Webhooks reference signature, which verifies', () => {
    const { secret, id, timestamp, body, signature } = REFERENCE;
    expect(signWebhook(secret, id, timestamp, body)).toBe(signature);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(verifyWebhook(secret, headers, body, now() - timestamp + 60)).toBe(true);
    expect(verifyWebhook(secret, headers, body)).toBe(false);
  });

  it('use a secret without the whsec_ prefix as its UTF-8 bytes', () => {
    const plain = 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const { id, timestamp, body, signature } = REFERENCE;
    expect(signWebhook(plain, id, timestamp, body)).not.toBe(signature);
    const { headers } = signed(plain, body);
    expect(verifyWebhook(plain, headers, body)).toBe(true);
    expect(verifyWebhook(`whsec_${plain}`, headers, body)).toBe(false);
  });

  it('fail with another secret, an altered body or a missing header', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const { headers, body } = signed(secret, '{"referenceId":"r-1"}');
    expect(verifyWebhook(secret, headers, body)).toBe(true);
    expect(verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, headers, body)).toBe(false);
    expect(verifyWebhook(secret, headers, '{"referenceId":"r-2"}')).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-id': 'delivery-2' }, body)).toBe(false);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const rest = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
      expect(verifyWebhook(secret, rest, body)).toBe(false);
    }
  });

  it('fail outside the timestamp tolerance, in the past or the future', () => {
    const secret = 'a-secret-of-enough-length';
    const body = '{}';
    expect(verifyWebhook(secret, signed(secret, body, now() - 290).headers, body)).toBe(true);
    expect(verifyWebhook(secret, signed(secret, body, now() - 310).headers, body)).toBe(false);
    expect(verifyWebhook(secret, signed(secret, body, now() + 310).headers, body)).toBe(false);
    expect(verifyWebhook(secret, signed(secret, body, now() - 50).headers, body, 30)).toBe(false);
    const garbled = { ...signed(secret, body).headers, 'webhook-timestamp': 'soon' };
    expect(verifyWebhook(secret, garbled, body)).toBe(false);
  });

  it('accept a space-separated list with one valid v1 signature, in any header case or as an array', () => {
    const secret = 'a-secret-of-enough-length';
    const { headers, body } = signed(secret, '[1,2,3]');
    const valid = headers['webhook-signature'] as string;
    const other = signWebhook('another-secret-of-length', 'delivery-1', now(), body);
    const listed = { ...headers, 'webhook-signature': `${other} ${valid}` };
    expect(verifyWebhook(secret, listed, body)).toBe(true);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': other }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': valid.replace('v1,', 'v2,') }, body)).toBe(false);
    const capitalised = {
      'Webhook-Id': headers['webhook-id'],
      'Webhook-Timestamp': headers['webhook-timestamp'],
      'Webhook-Signature': [other, valid],
    };
    expect(verifyWebhook(secret, capitalised, body)).toBe(true);
  });

  it('leave the signature out, but not the id and timestamp, without a secret', () => {
    expect(webhookHeaders(undefined, 'd-1', 1700000000, '{}')).toEqual({
      'webhook-id': 'd-1',
      'webhook-timestamp': '1700000000',
    });
  });
});
