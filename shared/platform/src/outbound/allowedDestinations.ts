import type ipaddr from 'ipaddr.js';
import { addressWithin, parseAddress, unmapped, type IpAddress, type Network } from './addressRanges.js';

/**
 * OUTBOUND_ALLOWED_DESTINATIONS: the destinations an operator opened although they are not public (or, with
 * OUTBOUND_POLICY=allowlist, the only destinations at all). Hostnames match exactly, `*.suffix` matches every
 * name under the suffix (not the suffix itself), IPs and CIDRs match addresses, IPv4-mapped IPv6 ones included.
 */
export interface AllowedDestinations {
  /** The entries as written (normalized), for documentation and logs. */
  readonly entries: readonly string[];
  allowsName(hostname: string): boolean;
  allowsAddress(address: IpAddress): boolean;
}

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** A hostname as matched: lower case, without the trailing dot of a fully qualified name. */
export const normalizedHostname = (hostname: string) => hostname.toLowerCase().replace(/\.$/, '');

type Entry = { name: string } | { suffix: string } | { network: Network };

/** An IPv4-mapped IPv6 network (::ffff:10.0.0.0/104) as the IPv4 network it is, since addresses are unmapped. */
function plainNetwork([address, bits]: Network): Network {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [address, bits];
}

function parseEntry(text: string): Entry | string {
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const address = parseAddress(text.slice(0, slash));
    const bits = text.slice(slash + 1);
    const max = address?.kind() === 'ipv4' ? 32 : 128;
    if (!address || !/^\d{1,3}$/.test(bits) || Number(bits) > max)
      return `"${text}" is not a CIDR (such as 10.0.0.0/8 or fd00::/8)`;
    return { network: plainNetwork([address, Number(bits)]) };
  }
  const address = parseAddress(text);
  if (address) return { network: plainNetwork([address, address.kind() === 'ipv4' ? 32 : 128]) };
  const name = normalizedHostname(text);
  if (name.startsWith('*.') && HOSTNAME.test(name.slice(2))) return { suffix: name.slice(1) };
  if (HOSTNAME.test(name) && !/^[\d.]+$/.test(name)) return { name };
  return `"${text}" is not a hostname, *.suffix, IP address or CIDR`;
}

/** The allowlist of a comma-separated list, or the problems of its entries. */
export function parseAllowedDestinations(text: string): AllowedDestinations | { problems: string[] } {
  const written = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const parsed = written.map(parseEntry);
  const problems = parsed.filter((entry): entry is string => typeof entry === 'string');
  if (problems.length > 0) return { problems };
  const entries = parsed as Entry[];
  const names = new Set(entries.flatMap((entry) => ('name' in entry ? [entry.name] : [])));
  const suffixes = entries.flatMap((entry) => ('suffix' in entry ? [entry.suffix] : []));
  const networks = entries.flatMap((entry) => ('network' in entry ? [entry.network] : []));
  return {
    entries: entries.map((entry) =>
      'name' in entry
        ? entry.name
        : 'suffix' in entry
          ? `*${entry.suffix}`
          : `${entry.network[0].toString()}/${entry.network[1]}`,
    ),
    allowsName: (hostname) => {
      const name = normalizedHostname(hostname);
      return names.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
    },
    allowsAddress: (address) => {
      const plain = unmapped(address);
      return networks.some((range) => addressWithin(plain, range));
    },
  };
}

/** The allowlist of a comma-separated list; throws naming every bad entry. */
export function allowedDestinations(text: string): AllowedDestinations {
  const allowed = parseAllowedDestinations(text);
  if ('problems' in allowed) throw new Error(`OUTBOUND_ALLOWED_DESTINATIONS: ${allowed.problems.join('; ')}`);
  return allowed;
}

/**
 * This machine's loopback interface, by address and by name: what `make dev` and the test stacks open for
 * receivers on 127.0.0.1.
 */
export const LOOPBACK_DESTINATIONS = '127.0.0.0/8,::1,localhost';

/** No destination allowed beyond the public ones. */
export const NOTHING_ALLOWED: AllowedDestinations = {
  entries: [],
  allowsName: () => false,
  allowsAddress: () => false,
};
