import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWebhookReceiver, type WebhookReceiver } from '@frequency-gateway/devstack';
import {
  allowedDestinations,
  ConfigError,
  LOOPBACK_DESTINATIONS,
  OutboundPolicy,
  OutboundRefusal,
  outboundVariables,
  parseConfig,
  postOutbound,
  shownUrl,
  type HostResolver,
  type ResolvedAddress,
} from '../src/index.js';

// Every name these tests resolve is answered by this table, never by a real resolver; no test connects to an
// address that is not loopback (the policy refuses before any connection, which is what is being tested).
const NAMES: Record<string, string[]> = {
  'rebind.example': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'internal.example': ['10.0.0.1'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'split.example': ['93.184.216.34', '192.168.1.10'],
  'cgnat.example': ['100.100.100.100'],
  'ula.example': ['fd12::1'],
  'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'receiver.ns.svc.cluster.local': ['172.20.0.5'],
  'svc.cluster.local': ['172.20.0.5'],
  'elsewhere.example': ['10.9.9.9'],
};

/** A resolver that answers from NAMES and counts its questions. */
function tableResolver(): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const addresses = NAMES[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

const LOOPBACK = 'a loopback address';
const PRIVATE = 'a private address';
const LINK_LOCAL = 'a link-local address';

interface Case {
  url: string;
  /** What the refusal says (undefined: allowed). */
  refused?: string;
  /** A name: registration lets it through; only its addresses, at delivery, are refused. */
  byAddress?: true;
}

const DEFAULT_POLICY_CASES: Case[] = [
  // IPv4 in every spelling the WHATWG URL parser turns into 127.0.0.1.
  { url: 'http://127.0.0.1/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://127.0.0.1:6379/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://2130706433/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://0177.0.0.1/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://0x7f.1/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://0x7f000001/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://127.1/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://0x7f.0.0.01/', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://127.0.0.1./', refused: `127.0.0.1 is ${LOOPBACK}` },
  { url: 'http://127.255.255.254/', refused: `127.255.255.254 is ${LOOPBACK}` },
  { url: 'http://0.0.0.0:6379/', refused: '0.0.0.0 is an unspecified address' },
  { url: 'http://0/', refused: '0.0.0.0 is an unspecified address' },
  { url: 'http://10.0.0.1/', refused: `10.0.0.1 is ${PRIVATE}` },
  { url: 'http://172.16.0.1/', refused: `172.16.0.1 is ${PRIVATE}` },
  { url: 'http://172.31.255.255/', refused: `172.31.255.255 is ${PRIVATE}` },
  { url: 'http://192.168.1.1/', refused: `192.168.1.1 is ${PRIVATE}` },
  { url: 'http://169.254.169.254/latest/meta-data/', refused: `169.254.169.254 is ${LINK_LOCAL}` },
  { url: 'http://2852039166/', refused: `169.254.169.254 is ${LINK_LOCAL}` },
  { url: 'http://100.64.0.1/', refused: '100.64.0.1 is a carrier-grade NAT (shared) address' },
  { url: 'http://224.0.0.1/', refused: '224.0.0.1 is a multicast address' },
  { url: 'http://255.255.255.255/', refused: '255.255.255.255 is the broadcast address' },
  { url: 'http://192.0.2.1/', refused: '192.0.2.1 is a documentation address' },
  { url: 'http://198.18.0.1/', refused: '198.18.0.1 is a benchmarking address' },
  { url: 'http://240.0.0.1/', refused: '240.0.0.1 is a reserved address' },
  // IPv6, and IPv6 spellings of refused IPv4 addresses.
  { url: 'http://[::1]/', refused: `::1 is ${LOOPBACK}` },
  { url: 'http://[0:0:0:0:0:0:0:1]:8080/', refused: `::1 is ${LOOPBACK}` },
  { url: 'http://[::]/', refused: ':: is an unspecified address' },
  { url: 'http://[::ffff:127.0.0.1]/', refused: `::ffff:7f00:1 is ${LOOPBACK} (IPv4-mapped 127.0.0.1)` },
  { url: 'http://[::ffff:7f00:1]/', refused: `::ffff:7f00:1 is ${LOOPBACK} (IPv4-mapped 127.0.0.1)` },
  { url: 'http://[::ffff:169.254.169.254]/', refused: `is ${LINK_LOCAL} (IPv4-mapped 169.254.169.254)` },
  { url: 'http://[::ffff:10.0.0.1]/', refused: `is ${PRIVATE} (IPv4-mapped 10.0.0.1)` },
  { url: 'http://[::127.0.0.1]/', refused: `::7f00:1 is ${LOOPBACK} (IPv4-compatible 127.0.0.1)` },
  { url: 'http://[64:ff9b::127.0.0.1]/', refused: `is ${LOOPBACK} (NAT64 127.0.0.1)` },
  { url: 'http://[64:ff9b::a9fe:a9fe]/', refused: `is ${LINK_LOCAL} (NAT64 169.254.169.254)` },
  { url: 'http://[2002:7f00:1::]/', refused: `is ${LOOPBACK} (6to4 127.0.0.1)` },
  { url: 'http://[64:ff9b:1::a00:1]/', refused: `is ${PRIVATE}` },
  { url: 'http://[fe80::1]/', refused: `fe80::1 is ${LINK_LOCAL}` },
  { url: 'http://[fd00::1]/', refused: 'fd00::1 is a unique-local address' },
  { url: 'http://[fc00::1]/', refused: 'fc00::1 is a unique-local address' },
  { url: 'http://[fec0::1]/', refused: 'fec0::1 is a site-local address' },
  { url: 'http://[ff02::1]/', refused: 'ff02::1 is a multicast address' },
  { url: 'http://[2001:db8::1]/', refused: '2001:db8::1 is a documentation address' },
  { url: 'http://[100::1]/', refused: '100::1 is a reserved address' },
  // Names: localhost is loopback by definition; others are judged by what they resolve to.
  { url: 'http://localhost:6379/', refused: `localhost resolves to 127.0.0.1, ${LOOPBACK}` },
  { url: 'http://LOCALHOST./', refused: `localhost resolves to 127.0.0.1, ${LOOPBACK}` },
  { url: 'http://api.localhost/', refused: `api.localhost resolves to 127.0.0.1, ${LOOPBACK}` },
  { url: 'http://rebind.example/', refused: `rebind.example resolves to 127.0.0.1, ${LOOPBACK}`, byAddress: true },
  { url: 'http://metadata.example/', refused: `resolves to 169.254.169.254, ${LINK_LOCAL}`, byAddress: true },
  { url: 'http://internal.example/', refused: `internal.example resolves to 10.0.0.1, ${PRIVATE}`, byAddress: true },
  {
    url: 'http://mapped.example/',
    refused: `resolves to ::ffff:127.0.0.1, ${LOOPBACK} (IPv4-mapped 127.0.0.1)`,
    byAddress: true,
  },
  { url: 'http://split.example/', refused: `split.example resolves to 192.168.1.10, ${PRIVATE}`, byAddress: true },
  { url: 'http://cgnat.example/', refused: 'a carrier-grade NAT (shared) address', byAddress: true },
  { url: 'http://ula.example/', refused: 'ula.example resolves to fd12::1, a unique-local address', byAddress: true },
  { url: 'ftp://8.8.8.8/', refused: 'ftp: is not http: or https:' },
  // Public destinations.
  { url: 'https://8.8.8.8/hook' },
  { url: 'http://172.32.0.1/' },
  { url: 'https://[2606:4700:4700::1111]/' },
  { url: 'http://[::ffff:8.8.8.8]/' },
  { url: 'http://[64:ff9b::808:808]/' },
  { url: 'https://public.example/hook' },
];

const RULE = 'destinations allowed: public addresses and OUTBOUND_ALLOWED_DESTINATIONS';
const ONLY_RULE = 'destinations allowed (OUTBOUND_POLICY=allowlist): only OUTBOUND_ALLOWED_DESTINATIONS';

async function deliveryVerdict(policy: OutboundPolicy, url: string): Promise<string | undefined> {
  try {
    await policy.destination(url);
    return undefined;
  } catch (error) {
    if (error instanceof OutboundRefusal) return error.message;
    throw error;
  }
}

describe('the outbound policy, by default (public destinations only)', () => {
  const resolve = tableResolver();
  const policy = new OutboundPolicy({ resolve });

  it('has the table cover at least 30 spellings', () => {
    expect(DEFAULT_POLICY_CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(DEFAULT_POLICY_CASES)('judges $url at registration and at delivery', async ({ url, refused, byAddress }) => {
    const registration = policy.refusal(url);
    const delivery = await deliveryVerdict(policy, url);
    if (refused === undefined) {
      expect(registration).toBeUndefined();
      expect(delivery).toBeUndefined();
      return;
    }
    if (byAddress) expect(registration).toBeUndefined();
    else expect(registration).toContain(refused);
    expect(delivery).toContain(refused);
    if (!refused.includes('ftp:')) expect(delivery).toMatch(new RegExp(`; ${RULE}$`));
  });

  it('asks the resolver once per name, never for a literal address or localhost', async () => {
    resolve.asked.length = 0;
    await deliveryVerdict(policy, 'http://rebind.example/');
    await deliveryVerdict(policy, 'http://127.0.0.1/');
    await deliveryVerdict(policy, 'http://[::1]/');
    await deliveryVerdict(policy, 'http://localhost/');
    expect(resolve.asked).toEqual(['rebind.example']);
  });

  it('gives every address of an allowed name as the ones to connect to', async () => {
    const destination = await policy.destination('https://public.example/hook');
    expect(destination.addresses).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('leaves a name that does not resolve to be tried again (not a refusal)', async () => {
    await expect(policy.destination('http://nowhere.example/')).rejects.toThrow('ENOTFOUND');
    await expect(policy.destination('http://nowhere.example/')).rejects.not.toBeInstanceOf(OutboundRefusal);
  });
});

describe('OUTBOUND_ALLOWED_DESTINATIONS', () => {
  const policy = new OutboundPolicy({
    allowed: allowedDestinations('*.svc.cluster.local, 10.0.0.0/8 ,127.0.0.1,fd00::/8,hooks.internal'),
    resolve: tableResolver(),
  });

  it.each([
    { url: 'http://10.1.2.3:8080/hook' },
    { url: 'http://[::ffff:10.1.2.3]/' },
    { url: 'http://127.0.0.1:9000/' },
    { url: 'http://0x7f.1/' },
    { url: 'http://[fd00::5]/' },
    { url: 'http://receiver.ns.svc.cluster.local/hook' },
    { url: 'http://elsewhere.example/' },
    { url: 'http://127.0.0.2/', refused: `127.0.0.2 is ${LOOPBACK}` },
    { url: 'http://localhost/', refused: `localhost resolves to ::1, ${LOOPBACK}` },
    { url: 'http://192.168.1.1/', refused: `192.168.1.1 is ${PRIVATE}` },
    { url: 'http://[fc00::5]/', refused: 'fc00::5 is a unique-local address' },
    { url: 'http://svc.cluster.local/', refused: `svc.cluster.local resolves to 172.20.0.5, ${PRIVATE}` },
    { url: 'http://169.254.169.254/', refused: `169.254.169.254 is ${LINK_LOCAL}` },
  ])('open what they name and nothing more: $url', async ({ url, refused }) => {
    const verdict = await deliveryVerdict(policy, url);
    if (refused === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toBe(`${refused}; ${RULE}`);
  });

  it('are read from the environment, every bad entry named at once', () => {
    const config = parseConfig(outboundVariables(), {});
    expect(config.OUTBOUND_POLICY).toBe('public');
    expect(config.OUTBOUND_ALLOWED_DESTINATIONS.entries).toEqual([]);
    const opened = parseConfig(outboundVariables(), { OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS });
    expect(opened.OUTBOUND_ALLOWED_DESTINATIONS.entries).toEqual(['127.0.0.0/8', '::1/128', 'localhost']);
    let error: unknown;
    try {
      parseConfig(outboundVariables(), {
        OUTBOUND_POLICY: 'open',
        OUTBOUND_ALLOWED_DESTINATIONS: '*,10.0.0.0/33,ok.example,1.2.3,foo bar',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('OUTBOUND_POLICY');
    for (const entry of ['"*"', '"10.0.0.0/33"', '"1.2.3"', '"foo bar"']) expect(message).toContain(entry);
    expect(message).not.toContain('"ok.example"');
  });
});

describe('OUTBOUND_POLICY=allowlist', () => {
  const resolve = tableResolver();
  const policy = new OutboundPolicy({
    mode: 'allowlist',
    allowed: allowedDestinations(LOOPBACK_DESTINATIONS),
    resolve,
  });

  it.each([
    { url: 'http://127.0.0.1:8080/' },
    { url: 'http://127.9.9.9/' },
    { url: 'http://localhost/' },
    { url: 'http://[::1]/' },
    { url: 'http://[::ffff:127.0.0.1]/' },
    { url: 'https://8.8.8.8/', refused: '8.8.8.8 is not in OUTBOUND_ALLOWED_DESTINATIONS' },
    { url: 'http://10.0.0.1/', refused: '10.0.0.1 is not in OUTBOUND_ALLOWED_DESTINATIONS' },
    { url: 'https://public.example/', refused: 'public.example is not in OUTBOUND_ALLOWED_DESTINATIONS' },
    { url: 'http://rebind.example/', refused: 'rebind.example is not in OUTBOUND_ALLOWED_DESTINATIONS' },
  ])('allows only the list, public addresses refused too: $url', async ({ url, refused }) => {
    const registration = policy.refusal(url);
    const delivery = await deliveryVerdict(policy, url);
    if (refused === undefined) {
      expect(registration).toBeUndefined();
      expect(delivery).toBeUndefined();
    } else {
      expect(registration).toBe(`${refused}; ${ONLY_RULE}`);
      expect(delivery).toBe(`${refused}; ${ONLY_RULE}`);
    }
  });

  it('never asks a resolver about a name that is not on the list', () => {
    expect(resolve.asked).toEqual([]);
  });
});

describe('postOutbound', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.stop();
  });
  const request = () => ({
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(5000),
  });

  it('sends nothing to a refused address, nor to a name that resolves to one', async () => {
    const policy = new OutboundPolicy({ resolve: tableResolver() });
    await expect(postOutbound(policy, `${receiver.url}/direct`, request())).rejects.toBeInstanceOf(OutboundRefusal);
    await expect(postOutbound(policy, `http://rebind.example:${receiver.port}/rebound`, request())).rejects.toThrow(
      `rebind.example resolves to 127.0.0.1, ${LOOPBACK}; ${RULE}`,
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the address it checked, not to what the name resolves to afterwards', async () => {
    // A second receiver on another loopback address and the same port: where a second resolution would lead.
    const elsewhere: Server = createServer((_request, response) => response.writeHead(200).end());
    const requestsElsewhere: string[] = [];
    elsewhere.on('request', (incoming: { url?: string }) => requestsElsewhere.push(incoming.url ?? ''));
    await new Promise<void>((resolve) => elsewhere.listen(receiver.port, '127.0.0.2', resolve));
    expect((elsewhere.address() as AddressInfo).address).toBe('127.0.0.2');
    try {
      const asked: string[] = [];
      const rebinding: HostResolver = async (hostname) => {
        asked.push(hostname);
        return [{ address: asked.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
      };
      const policy = new OutboundPolicy({ allowed: allowedDestinations('127.0.0.1'), resolve: rebinding });
      const answer = await postOutbound(policy, `http://hooks.test:${receiver.port}/pinned`, request());
      expect(answer.status).toBe(200);
      expect(receiver.received.map((webhook) => webhook.path)).toEqual(['/pinned']);
      expect(asked).toEqual(['hooks.test']);
      // The name now points elsewhere: judged again, and refused before any connection.
      await expect(postOutbound(policy, `http://hooks.test:${receiver.port}/again`, request())).rejects.toThrow(
        `hooks.test resolves to 127.0.0.2, ${LOOPBACK}`,
      );
      expect(requestsElsewhere).toEqual([]);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('does not follow a redirect', async () => {
    const policy = new OutboundPolicy({ allowed: allowedDestinations(LOOPBACK_DESTINATIONS) });
    const before = receiver.received.length;
    receiver.respondWith((webhook) =>
      webhook.path === '/moved' ? { status: 307, headers: { location: `${receiver.url}/target` } } : 200,
    );
    const answer = await postOutbound(policy, `${receiver.url}/moved`, request());
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe(`${receiver.url}/target`);
    expect(receiver.received.slice(before).map((webhook) => webhook.path)).toEqual(['/moved']);
    receiver.respondWith(200);
  });
});

describe('shownUrl', () => {
  it('masks the credentials of a URL, whatever they are, and leaves the rest as given', () => {
    expect(shownUrl('https://user:p%40ss@hooks.example:8443/in/box?x=1#f')).toBe(
      'https://***@hooks.example:8443/in/box?x=1#f',
    );
    expect(shownUrl('https://token-only@hooks.example/')).toBe('https://***@hooks.example/');
    expect(shownUrl('https://hooks.example/path?email=a@b.example')).toBe(
      'https://hooks.example/path?email=a@b.example',
    );
    expect(shownUrl('not a url')).toBe('not a url');
  });
});
