import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { AppViewRoute } from '@bull-board/api/typings/app';
import { ExpressAdapter } from '@bull-board/express';
import type { RequestHandler } from 'express';
import type { Queue } from 'bullmq';
import { externalPath } from '../http/basePath.js';
import { errorEnvelope } from '../http/errors.js';
import type { Mount } from '../http/app.js';
import type { Logger } from '../logging/index.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Basic authentication against one `user:pass` pair, compared in constant time. */
export function basicAuth(credentials: string, realm: string): RequestHandler {
  const expected = digest(credentials);
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const [scheme, encoded] = header.split(' ');
    const given = scheme?.toLowerCase() === 'basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    if (given !== '' && timingSafeEqual(digest(given), expected)) return next();
    res.setHeader('www-authenticate', `Basic realm="${realm}", charset="UTF-8"`);
    res.status(401).json(errorEnvelope(401, 'Authentication required'));
  };
}

export interface QueueBoardOptions {
  path: string;
  /** `user:pass`; when set the board asks for these credentials. */
  basicAuth?: string;
}

/**
 * bull-board's Express adapter with its page rendered per request: the page's `<base href>`, from which the
 * board loads its scripts and calls its API, is the board's path as the browser reached it, under the path
 * prefix when it came through one (see servePathPrefix). The stock adapter fixes it when it is set up.
 */
class PrefixAwareExpressAdapter extends ExpressAdapter {
  override setEntryRoute(route: AppViewRoute): ExpressAdapter {
    this.app[route.method](route.route, (_req, res) => {
      const { name, params } = route.handler({ basePath: externalPath(res, this.basePath), uiConfig: this.uiConfig });
      res.render(name, params);
    });
    return this;
  }

  /**
   * bull-board answers its API's errors itself, a 500 with the error's message, that no log line names. Thrown
   * from its error middleware, an error goes on to the app's error handler instead: Redis refusing the
   * credentials becomes a 503 saying so, anything else a 500 whose reference and cause are logged.
   */
  override setErrorHandler(): this {
    return super.setErrorHandler((error) => {
      throw error;
    });
  }
}

export interface QueueBoardPolicy {
  /** QUEUES_UI: false turns the board off everywhere. */
  enabled: boolean;
  /** QUEUES_BASIC_AUTH (`user:password`). */
  basicAuth?: string;
  /** ENVIRONMENT: the board is open without credentials only in `dev`. */
  environment: string;
}

/**
 * Whether and how the board is served: behind basic authentication when QUEUES_BASIC_AUTH is set; open in
 * `ENVIRONMENT=dev` without it; otherwise not at all (its pause, retry and clean actions are not for whoever
 * reaches the port), with a warning at start that says how to turn it on.
 */
export function queueBoardSettings(
  policy: QueueBoardPolicy,
  logger: Logger,
): Pick<QueueBoardOptions, 'basicAuth'> | undefined {
  if (!policy.enabled) return undefined;
  if (policy.basicAuth) return { basicAuth: policy.basicAuth };
  if (policy.environment === 'dev') return {};
  logger.warn(
    'the queue board (/queues) is not served: outside ENVIRONMENT=dev it needs credentials; set QUEUES_BASIC_AUTH=user:password to serve it behind basic authentication (or QUEUES_UI=false to say it is off on purpose)',
  );
  return undefined;
}

/** bull-board for the given queues, as a mount of the HTTP app. */
export function queueBoard(queues: readonly Queue[], options: QueueBoardOptions): Mount {
  const serverAdapter = new PrefixAwareExpressAdapter();
  serverAdapter.setBasePath(options.path);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  const handlers: RequestHandler[] = [serverAdapter.getRouter() as RequestHandler];
  if (options.basicAuth) handlers.unshift(basicAuth(options.basicAuth, 'queues'));
  return { path: options.path, handlers, contentSecurityPolicy: false };
}
