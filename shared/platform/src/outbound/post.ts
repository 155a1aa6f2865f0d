import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { inSpan, SpanKind, traceHeaders } from '../tracing/index.js';
import type { OutboundPolicy, ResolvedAddress } from './policy.js';

export interface OutboundPostRequest {
  headers: Record<string, string>;
  body: string;
  /** Ends the request (resolution and connection included) with the signal's reason. */
  signal: AbortSignal;
}

/** The receiver's answer; its body is not read. */
export interface OutboundAnswer {
  status: number;
  headers: IncomingHttpHeaders;
}

/**
 * A lookup that knows only the addresses already judged: the socket connects to one of them, never to what
 * the name resolves to by the time the connection is made.
 */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family || undefined;
    const usable = addresses.filter((entry) => family === undefined || entry.family === family);
    const reply = callback as (
      error: NodeJS.ErrnoException | null,
      address: string | ResolvedAddress[],
      family?: number,
    ) => void;
    const first = usable[0];
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} has no checked IPv${family} address`);
      error.code = 'ENOTFOUND';
      reply(error, '', 0);
    } else if (options.all) reply(null, usable);
    else reply(null, first.address, first.family);
  };
}

/**
 * POSTs `body` to a URL the policy allows, connecting only to the addresses it checked. Redirects are not
 * followed (a 3xx is an answer like any other). Throws OutboundRefusal, before any connection, for a refused
 * destination; the signal's reason when it aborts; the socket's error otherwise.
 */
export async function postOutbound(
  policy: OutboundPolicy,
  url: string | URL,
  request: OutboundPostRequest,
): Promise<OutboundAnswer> {
  // A client span whose context the receiver gets as `traceparent`, so that its own trace continues ours.
  return inSpan(
    'POST',
    { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'POST', 'url.full': spanUrl(url) } },
    async (span) => {
      const answer = await send(policy, url, { ...request, headers: { ...request.headers, ...traceHeaders() } });
      span.setAttribute('http.response.status_code', answer.status);
      return answer;
    },
  );
}

/** The URL as a span shows it: no credentials, no query (a receiver's URL may carry a token there). */
function spanUrl(url: string | URL): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'invalid URL';
  }
}

async function send(policy: OutboundPolicy, url: string | URL, request: OutboundPostRequest): Promise<OutboundAnswer> {
  const destination = await policy.destination(url, request.signal);
  const target = destination.url;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<OutboundAnswer>((resolve, reject) => {
    const outgoing = send(
      target,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(destination.addresses),
        signal: request.signal,
      },
      (response) => {
        // The body is drained, not read, so that the connection can serve the next request.
        response.resume();
        response.on('error', () => undefined);
        resolve({ status: response.statusCode ?? 0, headers: response.headers });
      },
    );
    outgoing.on('error', (error) => reject(request.signal.aborted ? request.signal.reason : error));
    outgoing.end(request.body);
  });
}
