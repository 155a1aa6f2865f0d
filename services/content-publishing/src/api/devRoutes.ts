import { randomBytes, randomInt } from 'node:crypto';
import type { RedisClient } from '@frequency-gateway/platform';
import {
  defineRoute,
  notFound,
  waitingIntakeJob,
  type Intake,
  type JobQueues,
  type Route,
} from '@frequency-gateway/platform';
import { dsnpContentUri } from '@frequency-gateway/dsnp';
import { dsnpHash } from '@frequency-gateway/storage';
import { z } from 'zod';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { CONTENT_REQUEST_JOB, type ContentKind, type ContentRequestOf } from '../jobs/document.js';
import { CONTENT_BODIES } from './schemas.js';

const KINDS = ['broadcast', 'reply', 'reaction', 'update', 'profile', 'tombstone'] as const;

const randomHash = () => dsnpHash(randomBytes(32));

/** A valid request body of each kind, with random content so that each one is a new request. */
function dummyBody(kind: ContentKind, index: number): object {
  const published = new Date().toISOString();
  const note = { content: `Dummy ${kind} ${index} (${randomBytes(6).toString('hex')})`, published };
  const target = { targetAnnouncementType: 'broadcast', targetContentHash: randomHash() };
  switch (kind) {
    case 'broadcast':
      return { content: note };
    case 'reply':
      return { inReplyTo: dsnpContentUri(randomInt(1, 1_000_000), randomHash()), content: note };
    case 'reaction':
      return { emoji: '🤌🏼', apply: 1, inReplyTo: dsnpContentUri(randomInt(1, 1_000_000), randomHash()) };
    case 'update':
      return { ...target, content: note };
    case 'tombstone':
      return target;
    case 'profile':
      return { profile: { name: `Dummy ${index}`, summary: note.content, published } };
  }
}

export interface DevRoutesOptions {
  intake: Intake;
  queues: JobQueues;
  redis: RedisClient;
  /** The intake stream, where an accepted job waits until a worker moves it into its queue. */
  stream: string;
}

/** Development helpers, mounted only when ENVIRONMENT=dev. */
export function devRoutes({ intake, queues, redis, stream }: DevRoutesOptions): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/dev/request/{jobId}',
      operationId: 'DevelopmentControllerV1_requestJob',
      summary: 'A job of any of the service queues, by id (development only)',
      tags: ['development'],
      params: z.object({ jobId: z.string().min(1) }),
      responses: {
        200: {
          description:
            'The BullMQ job, with its queue and state; state `intake` while the job waits for a worker to move it into its queue',
        },
        404: { description: 'No such job' },
      },
      handler: async ({ params }) => {
        for (const name of Object.values(CONTENT_PUBLISHING_QUEUES)) {
          const job = await queues.queue(name).getJob(params.jobId);
          if (job) return { status: 200, body: { queue: name, state: await job.getState(), ...job.toJSON() } };
        }
        const waiting = await waitingIntakeJob(redis, stream, params.jobId);
        if (waiting) return { status: 200, body: { ...waiting, state: 'intake', id: params.jobId } };
        throw notFound(`jobId: no job ${params.jobId} in ${Object.values(CONTENT_PUBLISHING_QUEUES).join(', ')}`);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/dev/dummy/announcement/{queueType}/{count}',
      operationId: 'DevelopmentControllerV1_populate',
      summary: 'Queue valid dummy content requests of one kind (development only)',
      description: 'Each dummy request goes through the same queue as a real one and is published by the worker.',
      tags: ['development'],
      params: z.object({
        queueType: z.enum(KINDS),
        count: z.coerce.number().int('must be an integer').min(1, 'must be 1 to 1000').max(1000, 'must be 1 to 1000'),
      }),
      responses: {
        201: {
          description: 'The referenceIds of the queued requests',
          schema: z.object({ referenceIds: z.array(z.string()) }),
        },
        400: { description: 'An unknown queueType or a count out of range' },
        503: { description: 'Redis is not reachable; the requests from the first not queued on were not queued' },
      },
      handler: async ({ params: { queueType, count } }) => {
        const referenceIds: string[] = [];
        for (let index = 0; index < count; index++) {
          const msaId = String(randomInt(2, 1_000_000));
          const { referenceId } = await acceptDummy(intake, queueType, index, msaId);
          referenceIds.push(referenceId);
        }
        return { status: 201, body: { referenceIds } };
      },
    }),
  ];
}

/** One dummy request of a kind, parsed like a posted body, so that it is exactly what a client could have sent. */
function acceptDummy<Kind extends ContentKind>(intake: Intake, kind: Kind, index: number, msaId: string) {
  const body = CONTENT_BODIES[kind].parse(dummyBody(kind, index));
  return intake.accept<ContentRequestOf<Kind>>({
    kind,
    identity: { msaId, body },
    details: { msaId },
    queue: CONTENT_PUBLISHING_QUEUES.request,
    jobName: CONTENT_REQUEST_JOB,
    job: (id) => ({ referenceId: id, kind, msaId, body, assets: {}, acceptedAt: new Date().toISOString() }),
  });
}
