import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** Why an address is no destination for a request a client or an operator pointed the gateway at. */
export type RefusedRange =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved';

/** How a refusal reads: "127.0.0.1 is a loopback address". */
export const RANGE_WORDING: Record<RefusedRange, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  shared: 'a carrier-grade NAT (shared) address',
  'unique-local': 'a unique-local address',
  'site-local': 'a site-local address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  reserved: 'a reserved address',
};

export interface AddressVerdict {
  range: RefusedRange;
  /** For an IPv6 address that carries an IPv4 one: how, and which ("IPv4-mapped 127.0.0.1"). */
  via?: string;
}

type Network = [IpAddress, number];
const network = (cidr: string): Network => ipaddr.parseCIDR(cidr);

// The IANA special-purpose registries, as far as a webhook is concerned: everything that is not a public,
// globally routed unicast address. Ranges are tried in order; the first that matches names the refusal.
const IPV4_RANGES: [RefusedRange, Network][] = [
  ['unspecified', network('0.0.0.0/8')],
  ['private', network('10.0.0.0/8')],
  ['shared', network('100.64.0.0/10')],
  ['loopback', network('127.0.0.0/8')],
  // Cloud metadata services (169.254.169.254) live here.
  ['link-local', network('169.254.0.0/16')],
  ['private', network('172.16.0.0/12')],
  // IETF protocol assignments (192.0.0.0/24) and the retired 6to4 relay anycast (192.88.99.0/24).
  ['reserved', network('192.0.0.0/24')],
  ['documentation', network('192.0.2.0/24')],
  ['reserved', network('192.88.99.0/24')],
  ['private', network('192.168.0.0/16')],
  ['benchmarking', network('198.18.0.0/15')],
  ['documentation', network('198.51.100.0/24')],
  ['documentation', network('203.0.113.0/24')],
  ['multicast', network('224.0.0.0/4')],
  ['broadcast', network('255.255.255.255/32')],
  ['reserved', network('240.0.0.0/4')],
];

const IPV6_RANGES: [RefusedRange, Network][] = [
  ['unspecified', network('::/128')],
  ['loopback', network('::1/128')],
  ['reserved', network('100::/64')],
  // Local-use NAT64 (RFC 8215): translates to whatever IPv4 network the site chose, private ones included.
  ['private', network('64:ff9b:1::/48')],
  // IETF protocol assignments, Teredo among them.
  ['reserved', network('2001::/23')],
  ['documentation', network('2001:db8::/32')],
  ['documentation', network('3fff::/20')],
  ['reserved', network('5f00::/16')],
  ['unique-local', network('fc00::/7')],
  ['site-local', network('fec0::/10')],
  ['link-local', network('fe80::/10')],
  ['multicast', network('ff00::/8')],
];

/** Global unicast: the only IPv6 space a public destination can be in. */
const GLOBAL_UNICAST = network('2000::/3');
/** :: and ::1, which sit inside the IPv4-compatible prefix but are names of their own. */
const UNSPECIFIED_OR_LOOPBACK = network('::/127');

interface Embedding {
  form: string;
  network: Network;
  /** Bytes of the IPv6 address that hold the IPv4 one. */
  at: number;
  /** Whether the form reaches a public IPv4 address as well as that address itself would. */
  routed: boolean;
}

// IPv6 spellings of IPv4 addresses. An IPv4-mapped address on a dual-stack socket IS the IPv4 address; the
// well-known NAT64 prefix reaches it through a translator; the others are deprecated and refused whatever they
// carry, but what they carry names the refusal when it is refused itself (::7f00:1 is a loopback address).
const EMBEDDINGS: Embedding[] = [
  { form: 'IPv4-mapped', network: network('::ffff:0:0/96'), at: 12, routed: true },
  { form: 'NAT64', network: network('64:ff9b::/96'), at: 12, routed: true },
  { form: 'IPv4-translated', network: network('::ffff:0:0:0/96'), at: 12, routed: false },
  { form: 'IPv4-compatible', network: network('::/96'), at: 12, routed: false },
  // 6to4 (2002::/16) carries its IPv4 address in bytes 2 to 5.
  { form: '6to4', network: network('2002::/16'), at: 2, routed: false },
];

const within = (address: IpAddress, [base, bits]: Network) =>
  address.kind() === base.kind() && address.match(base, bits);

function embedded(address: ipaddr.IPv6): { embedding: Embedding; ipv4: ipaddr.IPv4 } | undefined {
  const embedding = EMBEDDINGS.find((candidate) => within(address, candidate.network));
  if (!embedding) return undefined;
  const bytes = address.toByteArray();
  return { embedding, ipv4: new ipaddr.IPv4(bytes.slice(embedding.at, embedding.at + 4)) };
}

function ipv4Verdict(address: ipaddr.IPv4): AddressVerdict | undefined {
  const found = IPV4_RANGES.find(([, range]) => within(address, range));
  return found ? { range: found[0] } : undefined;
}

/**
 * Whether an address is refused as a destination, and why; undefined for a public address. IPv6 forms of IPv4
 * addresses (mapped, NAT64, compatible, translated, 6to4) are judged by the IPv4 address they carry.
 */
export function refusedRangeOf(address: IpAddress): AddressVerdict | undefined {
  if (address.kind() === 'ipv4') return ipv4Verdict(address as ipaddr.IPv4);
  const ipv6 = address as ipaddr.IPv6;
  if (within(ipv6, UNSPECIFIED_OR_LOOPBACK)) return ipv6Verdict(ipv6);
  const carried = embedded(ipv6);
  if (carried) {
    const via = `${carried.embedding.form} ${carried.ipv4.toString()}`;
    const verdict = ipv4Verdict(carried.ipv4);
    if (verdict) return { ...verdict, via };
    return carried.embedding.routed ? undefined : { range: 'reserved', via };
  }
  return ipv6Verdict(ipv6);
}

function ipv6Verdict(address: ipaddr.IPv6): AddressVerdict | undefined {
  const found = IPV6_RANGES.find(([, range]) => within(address, range));
  if (found) return { range: found[0] };
  return within(address, GLOBAL_UNICAST) ? undefined : { range: 'reserved' };
}

/** An address in its usual spelling, or undefined when the text is no IP address (dotted quad or IPv6 only). */
export function parseAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare) && !bare.includes('%')) return ipaddr.IPv6.parse(bare);
  return undefined;
}

/** The same address as IPv4 when it is an IPv4-mapped IPv6 one: what a dual-stack socket would reach. */
export function unmapped(address: IpAddress): IpAddress {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

export { within as addressWithin, type Network };
