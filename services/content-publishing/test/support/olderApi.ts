import { PassThrough } from 'node:stream';
import { createLogger, Intake, intakeStream, Registry } from '@frequency-gateway/platform';
import { Redis } from 'ioredis';
import { CONTENT_REQUEST_JOB, type AssetInfo, type ContentKind } from '../../src/jobs/document.js';
import { CONTENT_PUBLISHING_QUEUES, jobOptionsOf } from '../../src/queues.js';
import { contentRequests } from '../../src/requests.js';

/**
 * Accepts content requests as an api of an earlier version could have, with less validation: each goes through
 * the intake like any (its record and its job, which a running worker relays), so the worker meets values
 * today's api refuses (during a rolling upgrade, say). For tests of what the worker does with a request it
 * cannot publish.
 */
export interface OlderApi {
  /** Accepts the request as given; returns its referenceId. */
  accept(kind: ContentKind, msaId: string, body: unknown, assets?: Record<string, AssetInfo>): Promise<string>;
  close(): void;
}

/** `keyspace`: the components' CACHE_KEY_PREFIX as parsed (`{prefix}`). */
export function olderApi(redisUrl: string, keyspace: string): OlderApi {
  const redis = new Redis(redisUrl);
  const status = contentRequests.store(redis, keyspace, 3600);
  const logger = createLogger({
    component: 'older-api',
    level: 'fatal',
    pretty: false,
    destination: new PassThrough(),
  });
  const intake = new Intake(status, logger, new Registry(), {
    service: contentRequests.intake,
    stream: intakeStream(keyspace, contentRequests.intake),
    jobOptions: jobOptionsOf,
  });
  return {
    accept: async (kind, msaId, body, assets = {}) => {
      const { referenceId } = await intake.accept({
        kind,
        identity: { msaId, body },
        details: { msaId },
        queue: CONTENT_PUBLISHING_QUEUES.request,
        jobName: CONTENT_REQUEST_JOB,
        job: (id) => ({ referenceId: id, kind, msaId, body, assets, acceptedAt: new Date().toISOString() }),
      });
      return referenceId;
    },
    close: () => {
      status.close();
      redis.disconnect();
    },
  };
}
