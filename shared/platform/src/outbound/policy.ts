import { lookup } from 'node:dns/promises';
import { parseAddress, RANGE_WORDING, refusedRangeOf, type IpAddress } from './addressRanges.js';
import { NOTHING_ALLOWED, normalizedHostname, type AllowedDestinations } from './allowedDestinations.js';

/** `public`: public destinations and the allowlist; `allowlist`: the allowlist only. */
export type OutboundMode = 'public' | 'allowlist';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a hostname (a test gives one it controls; by default the system's resolver). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

/**
 * A destination the policy refuses. Its message names the host and the rule, never the URL's path, query or
 * credentials, so it can go into a 400, a log line or a dead letter as it is.
 */
export class OutboundRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusal';
  }
}

/** A destination that passed: the only addresses a connection to it may go to. */
export interface CheckedDestination {
  url: URL;
  addresses: ResolvedAddress[];
}

export interface OutboundPolicyOptions {
  mode?: OutboundMode;
  allowed?: AllowedDestinations;
  resolve?: HostResolver;
}

type Host = { address: IpAddress; text: string } | { name: string };

// RFC 6761: localhost and every name under it are the loopback interface, whatever a resolver says.
const LOCALHOST_ADDRESSES: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];
const isLocalhostName = (name: string) => name === 'localhost' || name.endsWith('.localhost');

/**
 * Where the gateway may send requests whose URL a client or an operator gave (webhooks, callbacks): by default
 * public addresses only, plus what OUTBOUND_ALLOWED_DESTINATIONS opens. `refusal` judges a URL as written (no
 * DNS; for registration); `destination` resolves its host once, judges every address, and returns them as the
 * only ones to connect to, so that a name re-pointed between the check and the connection gets nowhere.
 */
export class OutboundPolicy {
  readonly mode: OutboundMode;
  readonly allowed: AllowedDestinations;
  private readonly resolve: HostResolver;

  constructor(options: OutboundPolicyOptions = {}) {
    this.mode = options.mode ?? 'public';
    this.allowed = options.allowed ?? NOTHING_ALLOWED;
    this.resolve = options.resolve ?? systemResolver;
  }

  private get rule(): string {
    return this.mode === 'allowlist'
      ? 'destinations allowed (OUTBOUND_POLICY=allowlist): only OUTBOUND_ALLOWED_DESTINATIONS'
      : 'destinations allowed: public addresses and OUTBOUND_ALLOWED_DESTINATIONS';
  }

  /** Why an address is refused ("a loopback address"), or undefined. */
  private addressProblem(address: IpAddress): string | undefined {
    if (this.allowed.allowsAddress(address)) return undefined;
    if (this.mode === 'allowlist') return 'not in OUTBOUND_ALLOWED_DESTINATIONS';
    const verdict = refusedRangeOf(address);
    if (!verdict) return undefined;
    return `${RANGE_WORDING[verdict.range]}${verdict.via ? ` (${verdict.via})` : ''}`;
  }

  private hostOf(url: URL): Host | string {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} is not http: or https:`;
    const address = parseAddress(url.hostname);
    if (address) return { address, text: address.toString() };
    return { name: normalizedHostname(url.hostname) };
  }

  /** The refusal of the addresses a name resolves to, naming the first refused one. */
  private resolvedProblem(name: string, addresses: readonly ResolvedAddress[]): string | undefined {
    if (this.allowed.allowsName(name)) return undefined;
    for (const { address } of addresses) {
      const parsed = parseAddress(address);
      if (!parsed) return `${name} resolves to ${address}, which is no IP address`;
      const problem = this.addressProblem(parsed);
      if (problem) return `${name} resolves to ${address}, ${problem}`;
    }
    return undefined;
  }

  /** What can be judged without DNS: a literal address, an allowlisted or localhost name, the allowlist mode. */
  private staticProblem(host: Host): string | undefined {
    if ('address' in host) {
      const problem = this.addressProblem(host.address);
      return problem && `${host.text} is ${problem}`;
    }
    if (this.allowed.allowsName(host.name)) return undefined;
    if (this.mode === 'allowlist') return `${host.name} is not in OUTBOUND_ALLOWED_DESTINATIONS`;
    if (isLocalhostName(host.name)) return this.resolvedProblem(host.name, LOCALHOST_ADDRESSES);
    return undefined;
  }

  /**
   * Why the URL is refused as it is written, or undefined when it may be registered (a hostname is judged
   * again by its addresses when a request is sent). No DNS is asked.
   */
  refusal(url: string | URL): string | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'is not a URL';
    }
    const host = this.hostOf(parsed);
    if (typeof host === 'string') return host;
    const problem = this.staticProblem(host);
    return problem && `${problem}; ${this.rule}`;
  }

  /**
   * The addresses a request to `url` may connect to: its literal address, or every address its name resolves
   * to (once), each judged. Throws OutboundRefusal when any is refused; a name that does not resolve throws
   * the resolver's error (worth trying again later).
   */
  async destination(url: string | URL, signal?: AbortSignal): Promise<CheckedDestination> {
    const parsed = new URL(url);
    const refused = this.refusal(parsed);
    if (refused) throw new OutboundRefusal(refused);
    const host = this.hostOf(parsed) as Host;
    if ('address' in host)
      return { url: parsed, addresses: [{ address: host.text, family: host.address.kind() === 'ipv4' ? 4 : 6 }] };
    const addresses = isLocalhostName(host.name)
      ? LOCALHOST_ADDRESSES
      : await abortable(this.resolve(host.name), signal);
    if (addresses.length === 0) throw new Error(`${host.name} has no address`);
    const problem = this.resolvedProblem(host.name, addresses);
    if (problem) throw new OutboundRefusal(`${problem}; ${this.rule}`);
    return { url: parsed, addresses };
  }
}

/** The promise, or the signal's reason once it aborts first (a resolver cannot be cancelled, only left). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener('abort', abort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', abort), reject(error)),
    );
  });
}
