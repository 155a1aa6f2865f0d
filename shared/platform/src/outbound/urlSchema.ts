import { z } from 'zod';
import type { OutboundPolicy } from './policy.js';

/**
 * An http(s) URL the gateway will send requests to, refused (naming the rule) when the policy refuses its
 * destination as written. Names are judged again by their addresses when a request is sent.
 */
export function outboundUrl(policy: OutboundPolicy) {
  return z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .max(2048)
    .superRefine((url, context) => {
      const refusal = policy.refusal(url);
      if (refusal) context.addIssue({ code: 'custom', message: refusal });
    });
}
