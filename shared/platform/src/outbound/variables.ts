import { z } from 'zod';
import { variable, type ConfigOf } from '../config/index.js';
import { parseAllowedDestinations } from './allowedDestinations.js';
import { OutboundPolicy, type HostResolver } from './policy.js';

/** The outbound policy's variables, for every component that sends to (or registers) URLs it was given. */
export function outboundVariables() {
  return {
    OUTBOUND_POLICY: variable(
      z.enum(['public', 'allowlist']).default('public'),
      'Where requests to URLs given by clients or operators (webhooks, search callbacks) may go. `public`: public addresses and OUTBOUND_ALLOWED_DESTINATIONS; loopback, private (10/8, 172.16/12, 192.168/16), link-local (cloud metadata), carrier-grade NAT, unique-local, multicast and reserved addresses are refused, in any spelling and after DNS resolution. `allowlist`: only OUTBOUND_ALLOWED_DESTINATIONS',
    ),
    OUTBOUND_ALLOWED_DESTINATIONS: variable(
      z
        .string()
        .default('')
        .transform((text, context) => {
          const allowed = parseAllowedDestinations(text);
          if ('problems' in allowed) {
            for (const problem of allowed.problems) context.addIssue({ code: 'custom', message: problem });
            return z.NEVER;
          }
          return allowed;
        }),
      'Comma-separated destinations allowed although they are not public (what a cluster needs): hostnames (exact, or `*.suffix` for every name under the suffix), IP addresses and CIDRs, e.g. `*.svc.cluster.local,10.0.0.0/8`. A name listed here is allowed whatever it resolves to',
      { example: '*.svc.cluster.local,10.0.0.0/8' },
    ),
  };
}

export type OutboundConfig = ConfigOf<ReturnType<typeof outboundVariables>>;

/** The policy of a component's configuration; `resolve` replaces the system resolver (tests). */
export function outboundPolicy(config: OutboundConfig, resolve?: HostResolver): OutboundPolicy {
  return new OutboundPolicy({
    mode: config.OUTBOUND_POLICY,
    allowed: config.OUTBOUND_ALLOWED_DESTINATIONS,
    ...(resolve ? { resolve } : {}),
  });
}
