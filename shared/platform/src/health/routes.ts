import { z } from 'zod';
import { defineRoute, type Route } from '../http/route.js';
import type { EventLoopWatch, StartupWatch } from './liveness.js';
import type { ReadinessController } from './readiness.js';

const checkState = z
  .object({
    status: z.enum(['pending', 'up', 'down']),
    required: z.boolean(),
    target: z.string().optional(),
    since: z.string(),
    lastCheckedAt: z.string().optional(),
    latencyMs: z.number().optional(),
    error: z.string().optional(),
  })
  .meta({ id: 'DependencyCheck' });

const readiness = z
  .object({
    status: z.enum(['ready', 'not ready']),
    shuttingDown: z.boolean(),
    checks: z.record(z.string(), checkState),
  })
  .meta({ id: 'Readiness' });

const lease = z
  .object({
    leading: z.boolean(),
    lock: z.string(),
    holder: z.string().optional(),
    since: z.string(),
    error: z.string().optional(),
    stalledForMs: z
      .number()
      .optional()
      .describe('While the loop of a term this replica led is stuck: how long it has reported no progress'),
  })
  .meta({ id: 'LeaseStatus' });

const startingPart = z
  .object({
    startingForMs: z.number(),
    limitMs: z.number().optional().describe('Past this /livez fails (LIVENESS_MAX_PIPELINE_START_MS)'),
    problem: z.string().optional().describe('Why the last attempt to start failed'),
  })
  .meta({ id: 'StartingPart' });

const liveness = z
  .object({
    status: z.enum(['live', 'stuck']),
    eventLoopDelayMs: z.number(),
    starting: z
      .record(z.string(), startingPart)
      .optional()
      .describe('Parts that have not started yet (a worker pipeline retrying); stuck once one is past its limit'),
    stalledLoops: z
      .array(z.string())
      .optional()
      .describe('Leases whose loop made no progress for LEADER_STALL_MS on this replica (it stepped down): stuck'),
  })
  .meta({ id: 'Liveness' });

const health = z
  .object({
    status: z.enum(['ok', 'degraded', 'shutting down']),
    component: z.string(),
    version: z.string(),
    startedAt: z.string(),
    uptimeSeconds: z.number(),
    checks: z.record(z.string(), checkState),
    leases: z
      .record(z.string(), lease)
      .optional()
      .describe('Loops that run on one replica at a time: whether this replica leads each'),
  })
  .meta({ id: 'Health' });

export interface HealthRouteDeps {
  component: string;
  version: string;
  readiness: ReadinessController;
  eventLoop: EventLoopWatch;
  /** Parts still starting; one past its limit makes /livez fail. */
  startup?: StartupWatch;
  startedAt: Date;
  /** Where this replica stands on each lease it contends for. */
  leases?: () => Record<string, z.infer<typeof lease>>;
  /** The leases whose loop is stuck on this replica: /livez fails while there is one. */
  stalledLoops?: () => string[];
}

export function healthRoutes(deps: HealthRouteDeps): Route[] {
  const tags = ['health'];
  // Probes never carry a token and are never rate limited.
  const access = 'open';
  return [
    defineRoute({
      method: 'get',
      path: '/livez',
      operationId: 'HealthController_livez',
      summary:
        'Liveness: fails only when the event loop is stuck, a part has not started for too long, or a leader loop is stuck',
      tags,
      access,
      responses: {
        200: { description: 'The process is live', schema: liveness },
        503: {
          description:
            'The event loop is stuck, a part (a worker pipeline) is still not started past its limit, or a leader loop made no progress for LEADER_STALL_MS',
          schema: liveness,
        },
      },
      handler: () => {
        const starting = deps.startup?.starting() ?? [];
        const stalled = deps.stalledLoops?.() ?? [];
        const live = deps.eventLoop.isLive() && (deps.startup?.overdue().length ?? 0) === 0 && stalled.length === 0;
        return {
          status: live ? 200 : 503,
          body: {
            status: live ? 'live' : 'stuck',
            eventLoopDelayMs: deps.eventLoop.delayMs(),
            ...(starting.length > 0
              ? { starting: Object.fromEntries(starting.map(({ name, ...part }) => [name, part])) }
              : {}),
            ...(stalled.length > 0 ? { stalledLoops: stalled } : {}),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'HealthController_readyz',
      summary: 'Readiness: every required dependency answers and the component is not shutting down',
      tags,
      access,
      responses: {
        200: { description: 'Ready for traffic', schema: readiness },
        503: { description: 'Not ready; the body names each failing check', schema: readiness },
      },
      handler: () => {
        const snapshot = deps.readiness.snapshot();
        return {
          status: snapshot.ready ? 200 : 503,
          body: {
            status: snapshot.ready ? 'ready' : 'not ready',
            shuttingDown: snapshot.shuttingDown,
            checks: snapshot.checks,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'HealthController_healthz',
      summary: 'Summary of version, uptime and dependency states (never any secret)',
      tags,
      access,
      responses: { 200: { description: 'Health summary', schema: health } },
      handler: () => {
        const snapshot = deps.readiness.snapshot();
        const status = snapshot.shuttingDown ? 'shutting down' : snapshot.ready ? 'ok' : 'degraded';
        return {
          status: 200,
          body: {
            status,
            component: deps.component,
            version: deps.version,
            startedAt: deps.startedAt.toISOString(),
            uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
            checks: snapshot.checks,
            ...(deps.leases && Object.keys(deps.leases()).length > 0 ? { leases: deps.leases() } : {}),
          },
        };
      },
    }),
  ];
}
