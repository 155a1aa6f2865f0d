import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Express } from 'express';
import { errorEnvelope } from './errors.js';

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /**
   * Stops accepting connections at once, lets requests in flight finish, and closes idle keep-alive
   * connections; connections still busy after `graceMs` are cut. With `drainMs`, first keeps serving for up to that
   * long (less once no connection is left), answering every request with `Connection: close`: a client on a kept-alive
   * connection is told to leave by an answer, instead of having the connection closed under a request it is sending.
   * A connection with nothing left to send (its answer given, our side closed, as `closeAfterAnswer`'s lingers) is
   * not waited for: it is closed as soon as the stop begins, or as soon as its answer is out.
   */
  close(graceMs: number, drainMs?: number): Promise<void>;
}

/**
 * What Node's HTTP parser refuses before any route sees the request, answered with the error envelope instead of
 * Node's bare status line: headers over the limit (431; a long query string counts, it is part of the request
 * line), a request that took too long to arrive (408), or bytes that are not HTTP (400).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A response already under way on this connection cannot be followed by another one.
  const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          `the request line and headers exceed ${Math.floor(maxHeaderSize / 1024)} KiB (a long query string counts)`,
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time']
        : [400, 'not a valid HTTP request'];
  const envelope = errorEnvelope(status, message);
  const body = JSON.stringify(envelope);
  socket.end(
    `HTTP/1.1 ${status} ${envelope.error}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

/**
 * How long a connection answered before its request's body was read stays open after the answer, at most, for the
 * client to read it: a client that reads it closes the connection itself; a busy or slow one may take seconds to get
 * to it (nginx lingers up to 30 s too).
 */
const LINGER_MS = 30_000;

/**
 * A lingering close, for an answer given before the request's body was read (a refusal at a limit). Closing at once
 * would reset the connection under a client still sending, and the reset can take the answer with it before the
 * client reads it (it then sees only EPIPE or ECONNRESET). So our side ends after the answer and the connection stays
 * open, unread, for `lingerMs`: the client reads the answer and stops (its sending blocks once the buffers are full,
 * a few MiB at most) and closes the connection, or `lingerMs` passes. Node closes a `Connection: close` answer's
 * socket with destroySoon(); this request's socket does the above instead. A server stopping does not wait for it.
 */
export function closeAfterAnswer(request: IncomingMessage, lingerMs = LINGER_MS): void {
  const socket = request.socket;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    socket.once('close', () => clearTimeout(timer));
  };
}

/** Closes a connection once our side of it is done (at once if it is): nothing more will be sent on it. */
function closeWhenDone(socket: Socket): void {
  if (socket.destroyed || !socket.writableEnded) return;
  if (socket.writableFinished) socket.destroy();
  else socket.once('finish', () => socket.destroy());
}

export async function listen(app: Express, port: number, host = '0.0.0.0'): Promise<RunningServer> {
  const server = createServer(app);
  server.on('clientError', answerClientError);
  // Slightly above typical load balancer idle timeouts, so that the balancer closes first.
  server.keepAliveTimeout = 65_000;
  let draining = false;
  let closing = false;
  const active = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Before the app's own listener, which may answer at once.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    active.add(res);
    if (draining || closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      active.delete(res);
      // A keep-alive connection becomes idle once its response is done, and a lingering one has nothing left to
      // send: while stopping, close them then.
      if (draining) setImmediate(() => closeWhenDone(req.socket));
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => (server.off('error', reject), resolve()));
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    close: async (graceMs, drainMs = 0) => {
      const started = Date.now();
      draining = true;
      for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
      for (const socket of sockets) closeWhenDone(socket);
      if (drainMs > 0 && sockets.size > 0)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(drainMs, graceMs));
          const check = () => sockets.size === 0 && (clearTimeout(timer), resolve());
          for (const socket of sockets) socket.once('close', check);
        });
      const remainingMs = Math.max(0, graceMs - (Date.now() - started));
      await new Promise<void>((resolve) => {
        closing = true;
        for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
        const force = setTimeout(() => server.closeAllConnections(), remainingMs);
        force.unref();
        server.close(() => (clearTimeout(force), resolve()));
        server.closeIdleConnections();
      });
    },
  };
}
