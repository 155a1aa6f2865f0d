import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

type Lease = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
};

/** A core/v1 Event as the API server received it (the JSON body, unchanged). */
export type RecordedEvent = {
  metadata: { name?: string; namespace?: string };
  involvedObject: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  type?: string;
  reason?: string;
  action?: string;
  message?: string;
  source?: { component?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  eventTime?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
};

/** How the stand-in answers event writes: as the API server does, with a 500, or not at all. */
export type EventsBehaviour = 'accept' | 'fail' | 'hang';

/** metav1.MicroTime's wire format: RFC 3339 with exactly six fractional digits; anything else is a 400. */
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

type Answer = [number, unknown];

/**
 * A stand-in for the parts of the Kubernetes API server the platform uses:
 * - Leases in coordination.k8s.io/v1 with get, create (409 AlreadyExists) and replace guarded by
 *   resourceVersion (409 Conflict on a stale one), as leader election needs;
 * - core/v1 Events with create, validated as the API server validates an event that carries an eventTime
 *   (a MicroTime; reportingComponent, reportingInstance, action and reason required; involvedObject in the
 *   event's namespace; unique names). `eventsBehaviour` makes it fail or stop answering instead.
 */
export class KubernetesApiStandIn {
  readonly leases = new Map<string, Lease>();
  /** Every event accepted, in order. */
  readonly events: RecordedEvent[] = [];
  /** Every event write received, whatever the answer. */
  eventRequests = 0;
  eventsBehaviour: EventsBehaviour = 'accept';
  /** How the stand-in answers lease requests: as the API server does, or with a 500 (etcd unavailable). */
  leasesBehaviour: 'accept' | 'fail' = 'accept';
  /** Every lease request received, whatever the answer. */
  leaseRequests = 0;
  private version = 1;
  private server?: Server;
  requests = 0;

  async start(): Promise<KubeConfig> {
    this.server = createServer(
      (req, res) =>
        void this.handle(req).then(([status, body]) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        }),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'stand-in', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'token' }],
      contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'tester' }],
      currentContext: 'stand-in',
    });
    return kubeConfig;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    // Requests left hanging on purpose would otherwise keep the server open.
    this.server?.closeAllConnections();
    await closed;
  }

  private status(code: number, reason: string, message: string): Answer {
    return [code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }];
  }

  private async handle(req: IncomingMessage): Promise<Answer> {
    this.requests++;
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const body = text ? (JSON.parse(text) as unknown) : undefined;
    const url = req.url ?? '';
    const lease = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/.exec(url);
    if (lease) {
      this.leaseRequests++;
      if (this.leasesBehaviour === 'fail') return this.status(500, 'InternalError', 'etcdserver: leader changed');
      return this.lease(req.method, lease[1]!, lease[2], body as Lease | undefined);
    }
    const events = /^\/api\/v1\/namespaces\/([^/]+)\/events(?:\?|$)/.exec(url);
    if (events && req.method === 'POST') return this.event(events[1]!, body as RecordedEvent | undefined);
    return this.status(404, 'NotFound', 'no such path');
  }

  private async event(namespace: string, event: RecordedEvent | undefined): Promise<Answer> {
    this.eventRequests++;
    if (this.eventsBehaviour === 'hang') return new Promise<never>(() => undefined);
    if (this.eventsBehaviour === 'fail') return this.status(500, 'InternalError', 'etcdserver: request timed out');
    if (!event) return this.status(400, 'BadRequest', 'no body');
    if (event.metadata.namespace !== undefined && event.metadata.namespace !== namespace) {
      return this.status(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent');
    }
    if (event.eventTime !== undefined && !MICRO_TIME.test(event.eventTime)) {
      return this.status(400, 'BadRequest', `parsing time "${event.eventTime}" as "2006-01-02T15:04:05.000000Z07:00"`);
    }
    const problems: string[] = [];
    if (!event.metadata.name) problems.push('metadata.name: Required value');
    if (event.involvedObject.namespace !== namespace) problems.push('involvedObject.namespace: does not match');
    if (event.eventTime !== undefined) {
      for (const field of ['reportingComponent', 'reportingInstance', 'action', 'reason'] as const) {
        if (!event[field]) problems.push(`${field}: Required value`);
      }
    }
    if ((event.message ?? '').length > 1024) problems.push('message: can have at most 1024 characters');
    if (problems.length > 0) return this.status(422, 'Invalid', `Event is invalid: ${problems.join(', ')}`);
    if (this.events.some((e) => e.metadata.name === event.metadata.name)) {
      return this.status(409, 'AlreadyExists', `events "${event.metadata.name}" already exists`);
    }
    this.events.push(event);
    return [201, event];
  }

  /** The API server's answer to a Lease whose MicroTime fields are not RFC 3339 with six fractional digits. */
  private leaseTimeProblem(lease: Lease): Answer | undefined {
    for (const field of ['acquireTime', 'renewTime'] as const) {
      const value = lease.spec[field];
      if (value !== undefined && (typeof value !== 'string' || !MICRO_TIME.test(value))) {
        return this.status(400, 'BadRequest', `parsing time "${String(value)}" as "2006-01-02T15:04:05.000000Z07:00"`);
      }
    }
    return undefined;
  }

  private lease(method: string | undefined, namespace: string, name: string | undefined, body?: Lease): Answer {
    const key = `${namespace}/${name ?? body?.metadata.name}`;
    const current = this.leases.get(key);
    if (method === 'GET') return current ? [200, current] : this.status(404, 'NotFound', `leases "${name}" not found`);
    const badTime = body && this.leaseTimeProblem(body);
    if (badTime) return badTime;
    if (method === 'POST' && body) {
      if (current) return this.status(409, 'AlreadyExists', `leases "${body.metadata.name}" already exists`);
      const created = {
        ...body,
        metadata: { ...body.metadata, namespace, resourceVersion: String(this.version++) },
      };
      this.leases.set(key, created);
      return [201, created];
    }
    if (method === 'PUT' && body) {
      if (!current) return this.status(404, 'NotFound', `leases "${name}" not found`);
      if (body.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return this.status(
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      const replaced = { ...body, metadata: { ...body.metadata, resourceVersion: String(this.version++) } };
      this.leases.set(key, replaced);
      return [200, replaced];
    }
    return this.status(405, 'MethodNotAllowed', 'method not allowed');
  }
}
