import type { OutboundPolicy, ReadinessCheck } from '@frequency-gateway/platform';

/**
 * A reported (not required) health check of a configured webhook destination: down, naming the rule, while the
 * outbound policy refuses it or its name does not resolve. It resolves the name and judges the addresses; it
 * sends nothing there. Its target is the host, never the URL's path or credentials.
 */
export function webhookDestinationCheck(name: string, policy: OutboundPolicy, url: string): ReadinessCheck {
  return {
    name,
    required: false,
    target: new URL(url).host,
    // Once a minute: a DNS question, not a request to the receiver.
    intervalMs: 60_000,
    timeoutMs: 5_000,
    probe: async (signal) => {
      await policy.destination(url, signal);
    },
  };
}
