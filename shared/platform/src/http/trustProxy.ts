import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * Which proxies' X-Forwarded-For the api believes, in Express' `trust proxy` terms: `false` none (the client is
 * the socket's peer), a number of hops in front of the api, or the addresses and networks of the proxies.
 */
export type TrustProxy = false | number | string[];

/** Express' names for the private ranges it knows. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrNetwork(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return prefix >= 0 && prefix <= (family === 4 ? 32 : 128);
}

/**
 * HTTP_TRUST_PROXY: unset or `false`, a hop count (`1` behind one Ingress controller), or comma-separated
 * addresses, CIDR networks and `loopback`/`linklocal`/`uniquelocal`. Trusting every proxy (`true`) is not offered:
 * it would let any client pick its own address, and with it its rate limit.
 */
export const trustProxySchema = () =>
  z
    .string()
    .optional()
    .transform((text, context): TrustProxy => {
      const value = text?.trim() ?? '';
      if (value === '' || value === 'false') return false;
      if (/^\d+$/.test(value)) return Number(value);
      const entries = value.split(',').map((entry) => entry.trim());
      const bad = entries.filter((entry) => !isAddressOrNetwork(entry));
      if (bad.length > 0) {
        context.addIssue({
          code: 'custom',
          message: `must be false, a number of proxy hops, or addresses, networks (CIDR) and loopback/linklocal/uniquelocal separated by commas; not: ${bad.join(', ')}`,
        });
        return z.NEVER;
      }
      return entries;
    });
