import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
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

/** A core/v1 Secret as the stand-in stores it: what the API server keeps (data base64, server-set metadata). */
export type StoredSecret = {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
  };
  type: string;
  data?: Record<string, string>;
  immutable?: boolean;
};

/** An apps/v1 Deployment as far as the stand-in models one: its name and its replica count. */
export type StoredDeployment = {
  apiVersion: 'apps/v1';
  kind: 'Deployment';
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: { replicas: number };
};

/** A field manager's ownership of a Deployment's spec.replicas, as managedFields record it. */
export type ReplicasOwner = { operation: 'Apply' | 'Update'; subresource?: 'scale' };

/** One rule of an RBAC Role, as the stand-in applies it to Secrets and Deployments. */
export type PolicyRule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

/** How the stand-in answers event writes: as the API server does, with a 500, or not at all. */
export type EventsBehaviour = 'accept' | 'fail' | 'hang';

/** metav1.MicroTime's wire format: RFC 3339 with exactly six fractional digits; anything else is a 400. */
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

type Answer = [number, unknown];

/** Secret data keys, metadata names and label parts as the API server validates them (apimachinery's regexes). */
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The most a Secret's data may hold (corev1.MaxSecretSize). */
const MAX_SECRET_BYTES = 1024 * 1024;

/** RFC 7386 JSON merge patch: objects merge key by key, null removes a key, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * A stand-in for the parts of the Kubernetes API server the platform uses:
 * - Leases in coordination.k8s.io/v1 with get, create (409 AlreadyExists) and replace guarded by
 *   resourceVersion (409 Conflict on a stale one), as leader election needs;
 * - core/v1 Events with create, validated as the API server validates an event that carries an eventTime
 *   (a MicroTime; reportingComponent, reportingInstance, action and reason required; involvedObject in the
 *   event's namespace; unique names). `eventsBehaviour` makes it fail or stop answering instead, `holdEvents` delays the answers;
 * - core/v1 Secrets with get, create and JSON merge patch, answering as the API server v1.37 does (codes, reasons
 *   and messages taken from one): 404 NotFound, 409 AlreadyExists, 409 Conflict for a patch carrying a stale
 *   resourceVersion, 400 for data that is not base64 or a namespace that does not match, a 500 for a create that
 *   sets resourceVersion, 422 Invalid for a bad name, data key or label, more than 1 MiB of data, a changed type,
 *   or new data in an immutable Secret, 415 for a body or patch type it does not take. With `secretsAccess` set,
 *   requests are authorized as RBAC does with those Role rules (resourceNames never match a create): 403 Forbidden;
 * - apps/v1 Deployments with get and server-side apply of spec.replicas only, field managers included, as a v1.37
 *   API server does it: an apply that sets a count other than the current one while another manager owns the field
 *   is a 409 Conflict (unless forced); an apply that leaves the field out drops its manager's ownership, and when no
 *   owner is left the count is reset to its default, 1; a scale through the scale subresource (the autoscaler's
 *   way, `scaleDeployment`) makes its manager the only owner. Authorized by `deploymentsAccess` like Secrets.
 */
export class KubernetesApiStandIn {
  readonly leases = new Map<string, Lease>();
  /** Every event accepted, in order. */
  readonly events: RecordedEvent[] = [];
  /** Every event write received, whatever the answer. */
  eventRequests = 0;
  eventsBehaviour: EventsBehaviour = 'accept';
  private eventsHeld?: Promise<void>;
  /** How the stand-in answers lease requests: as the API server does, or with a 500 (etcd unavailable). */
  leasesBehaviour: 'accept' | 'fail' = 'accept';
  /** Every lease request received, whatever the answer. */
  leaseRequests = 0;
  /** Secrets by `namespace/name`. */
  readonly secrets = new Map<string, StoredSecret>();
  /** Every Secret request received (verb as RBAC names it, and the Secret's name when the URL has one). */
  readonly secretRequests: { verb: string; name?: string }[] = [];
  /** The rules of the Role bound to the caller; undefined: every Secret request is allowed. */
  secretsAccess?: PolicyRule[];
  /** Deployments by `namespace/name`, and the owners of each one's spec.replicas by field manager. */
  readonly deployments = new Map<string, StoredDeployment>();
  readonly replicasOwners = new Map<string, Map<string, ReplicasOwner>>();
  /** Every Deployment request received. */
  readonly deploymentRequests: { verb: string; name?: string }[] = [];
  /** The Role rules for Deployments; undefined: every Deployment request is allowed. */
  deploymentsAccess?: PolicyRule[];
  /** Called with each Deployment request before it is answered. */
  onDeploymentRequest?: (request: { verb: string; name?: string }) => void;
  /** Called with each Secret request before it is answered: a test plays another writer there. */
  onSecretRequest?: (request: { verb: string; name?: string }) => void;
  /** Who the caller is, in 403 messages. */
  user = 'system:serviceaccount:gateway:tester';
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
    const url = req.url ?? '';
    const secrets = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/?]+))?(?:\?|$)/.exec(url);
    if (secrets) return this.secret(req, secrets[1]!, secrets[2], text);
    const deployment = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/?]+)(?:\?(.*))?$/.exec(url);
    if (deployment)
      return this.deployment(req, deployment[1]!, deployment[2]!, new URLSearchParams(deployment[3]), text);
    const body = text ? (JSON.parse(text) as unknown) : undefined;
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

  /**
   * Holds every event request from now on, unanswered, until the returned function is called; then each is
   * answered as `eventsBehaviour` says. Lets a test see what a caller does while its events are in flight.
   */
  holdEvents(): () => void {
    let release!: () => void;
    this.eventsHeld = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.eventsHeld = undefined;
      release();
    };
  }

  private async event(namespace: string, event: RecordedEvent | undefined): Promise<Answer> {
    this.eventRequests++;
    await this.eventsHeld;
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

  private invalid(name: string, causes: string[]): Answer {
    const message = causes.length === 1 ? causes[0]! : `[${causes.join(', ')}]`;
    return [
      422,
      {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `Secret "${name}" is invalid: ${message}`,
        reason: 'Invalid',
        details: { name, kind: 'Secret' },
        code: 422,
      },
    ];
  }

  /** RBAC's answer for one request: undefined when a rule allows it (or no rules are set). */
  private forbidden(
    rules: PolicyRule[] | undefined,
    resource: { group: string; plural: string },
    verb: string,
    namespace: string,
    name: string | undefined,
  ): Answer | undefined {
    if (!rules) return undefined;
    const allowed = rules.some(
      (rule) =>
        (rule.apiGroups.includes(resource.group) || rule.apiGroups.includes('*')) &&
        (rule.resources.includes(resource.plural) || rule.resources.includes('*')) &&
        (rule.verbs.includes(verb) || rule.verbs.includes('*')) &&
        // A rule naming resources never matches a request without a name in its URL (a create, a list).
        (!rule.resourceNames?.length || (name !== undefined && rule.resourceNames.includes(name))),
    );
    if (allowed) return undefined;
    const what =
      name === undefined
        ? resource.plural
        : `${resource.plural}${resource.group ? `.${resource.group}` : ''} "${name}"`;
    return this.status(
      403,
      'Forbidden',
      `${what} is forbidden: User "${this.user}" cannot ${verb} resource "${resource.plural}" in API group "${resource.group}" in the namespace "${namespace}"`,
    );
  }

  /** The API server's validation of a Secret about to be stored; `previous` for an update. */
  private secretProblems(secret: StoredSecret, previous?: StoredSecret): string[] {
    const problems: string[] = [];
    const { name } = secret.metadata;
    if (!SUBDOMAIN.test(name) || name.length > 253) {
      problems.push(
        `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      );
    }
    for (const [key, value] of Object.entries(secret.metadata.labels ?? {})) {
      const [prefix, labelName] = key.includes('/')
        ? [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)]
        : ['', key];
      const keyValid =
        LABEL_NAME.test(labelName) &&
        labelName.length <= 63 &&
        (prefix === '' || (SUBDOMAIN.test(prefix) && prefix.length <= 253));
      if (!keyValid)
        problems.push(
          `metadata.labels: Invalid value: "${key}": a valid label key must consist of alphanumeric characters, '-', '_' or '.'`,
        );
      if (!LABEL_VALUE.test(value) || value.length > 63) {
        problems.push(
          `metadata.labels: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'`,
        );
      }
    }
    let bytes = 0;
    for (const [key, value] of Object.entries(secret.data ?? {})) {
      if (!DATA_KEY.test(key) || key.length > 253) {
        problems.push(
          `data[${key}]: Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
        );
      }
      bytes += Buffer.from(value, 'base64').length;
    }
    if (bytes > MAX_SECRET_BYTES) problems.push(`data: Too long: must have at most ${MAX_SECRET_BYTES} bytes`);
    if (previous && previous.type !== secret.type)
      problems.push(`type: Invalid value: "${secret.type}": field is immutable`);
    if (previous?.immutable && JSON.stringify(previous.data ?? {}) !== JSON.stringify(secret.data ?? {})) {
      problems.push('data: Forbidden: field is immutable when `immutable` is set');
    }
    return problems;
  }

  /** Data as the API server decodes it from JSON: every value base64 (standard alphabet, padded). */
  private undecodable(data: unknown): string | undefined {
    if (data === undefined) return undefined;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'data: expected an object';
    for (const value of Object.values(data)) {
      if (typeof value !== 'string' || !BASE64.test(value)) return 'illegal base64 data at input byte 0';
    }
    return undefined;
  }

  private async secret(
    req: IncomingMessage,
    namespace: string,
    name: string | undefined,
    text: string,
  ): Promise<Answer> {
    const method = req.method ?? 'GET';
    const verb = { GET: name ? 'get' : 'list', POST: 'create', PATCH: 'patch', PUT: 'update', DELETE: 'delete' }[
      method
    ];
    const request = { verb: verb ?? method, ...(name ? { name } : {}) };
    this.secretRequests.push(request);
    this.onSecretRequest?.(request);
    const refused = verb
      ? this.forbidden(this.secretsAccess, { group: '', plural: 'secrets' }, verb, namespace, name)
      : undefined;
    if (refused) return refused;
    const key = `${namespace}/${name}`;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();

    if (method === 'GET' && name) {
      const current = this.secrets.get(key);
      return current ? [200, current] : this.status(404, 'NotFound', `secrets "${name}" not found`);
    }

    if (method === 'POST' && !name) {
      if (contentType !== 'application/json') {
        return this.status(
          415,
          'UnsupportedMediaType',
          'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
        );
      }
      const body = JSON.parse(text) as {
        metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
        data?: unknown;
        stringData?: Record<string, string>;
        type?: string;
        immutable?: boolean;
      };
      const undecodable = this.undecodable(body.data);
      if (undecodable)
        return this.status(400, 'BadRequest', `Secret in version "v1" cannot be handled as a Secret: ${undecodable}`);
      if (body.metadata?.namespace !== undefined && body.metadata.namespace !== namespace) {
        return this.status(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      // The API server answers this one with a 500 and no reason.
      if (body.metadata?.resourceVersion) {
        return [
          500,
          {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: 'resourceVersion should not be set on objects to be created',
            code: 500,
          },
        ];
      }
      const secretName = body.metadata?.name ?? '';
      const data: Record<string, string> = { ...((body.data as Record<string, string> | undefined) ?? {}) };
      for (const [k, v] of Object.entries(body.stringData ?? {})) data[k] = Buffer.from(v).toString('base64');
      const created: StoredSecret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: secretName,
          namespace,
          uid: randomUUID(),
          resourceVersion: String(this.version++),
          creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          ...(body.metadata?.labels ? { labels: body.metadata.labels } : {}),
        },
        type: body.type ?? 'Opaque',
        ...(Object.keys(data).length > 0 ? { data } : {}),
        ...(body.immutable !== undefined ? { immutable: body.immutable } : {}),
      };
      const problems = this.secretProblems(created);
      if (problems.length > 0) return this.invalid(secretName, problems);
      if (this.secrets.has(`${namespace}/${secretName}`)) {
        return this.status(409, 'AlreadyExists', `secrets "${secretName}" already exists`);
      }
      this.secrets.set(`${namespace}/${secretName}`, created);
      return [201, created];
    }

    if (method === 'PATCH' && name) {
      if (contentType !== 'application/merge-patch+json') {
        return contentType === 'application/json-patch+json' ||
          contentType === 'application/strategic-merge-patch+json' ||
          contentType === 'application/apply-patch+yaml'
          ? this.status(
              415,
              'UnsupportedMediaType',
              `the stand-in takes only merge patches for Secrets, not ${contentType}`,
            )
          : this.status(415, 'UnsupportedMediaType', '415: Unsupported Media Type');
      }
      const current = this.secrets.get(key);
      if (!current) return this.status(404, 'NotFound', `secrets "${name}" not found`);
      const patched = mergePatch(current, JSON.parse(text)) as StoredSecret;
      // The API server quotes the whole patched object here; so does the stand-in, to keep callers honest.
      if (this.undecodable(patched.data)) {
        return this.status(
          422,
          'Invalid',
          ` "" is invalid: patch: Invalid value: "${JSON.stringify(patched)}": illegal base64 data at input byte 0`,
        );
      }
      if (patched.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return this.status(
          409,
          'Conflict',
          `Operation cannot be fulfilled on secrets "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
      const problems = this.secretProblems(patched, current);
      if (problems.length > 0) return this.invalid(name, problems);
      const stored = { ...patched, metadata: { ...patched.metadata, resourceVersion: String(this.version++) } };
      this.secrets.set(key, stored);
      return [200, stored];
    }

    return this.status(405, 'MethodNotAllowed', `the stand-in does not implement ${method} on secrets`);
  }

  /** What the autoscaler does: a scale through the scale subresource, which makes `manager` the only owner. */
  scaleDeployment(namespace: string, name: string, replicas: number, manager = 'kube-controller-manager'): void {
    const key = `${namespace}/${name}`;
    const deployment = this.deployments.get(key);
    if (!deployment) throw new Error(`no Deployment ${key}`);
    deployment.spec.replicas = replicas;
    deployment.metadata.resourceVersion = String(this.version++);
    this.replicasOwners.set(key, new Map([[manager, { operation: 'Update', subresource: 'scale' }]]));
  }

  /** A Deployment as an applier (Helm, say) created it with `replicas`, owned by that manager. */
  addDeployment(namespace: string, name: string, replicas: number, manager = 'helm'): void {
    const key = `${namespace}/${name}`;
    this.deployments.set(key, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, resourceVersion: String(this.version++) },
      spec: { replicas },
    });
    this.replicasOwners.set(key, new Map([[manager, { operation: 'Apply' }]]));
  }

  /** The server-side apply of spec.replicas by `manager`: a count, or (undefined) a manifest without the field. */
  private applyReplicas(
    key: string,
    name: string,
    manager: string,
    replicas: number | undefined,
    force: boolean,
  ): Answer {
    const deployment = this.deployments.get(key)!;
    const owners = this.replicasOwners.get(key) ?? new Map<string, ReplicasOwner>();
    if (replicas === undefined) {
      owners.delete(manager);
      // No owner left: the field is removed, and defaulting sets it again, to 1.
      if (owners.size === 0) deployment.spec.replicas = 1;
    } else {
      const others = [...owners].filter(([other]) => other !== manager);
      if (replicas !== deployment.spec.replicas && others.length > 0 && !force) {
        const conflicts = others.map(
          ([other, owner]) => `"${other}"${owner.subresource ? ` with subresource "${owner.subresource}"` : ''}`,
        );
        return this.status(
          409,
          'Conflict',
          conflicts.length === 1
            ? `Apply failed with 1 conflict: conflict with ${conflicts[0]} using apps/v1: .spec.replicas`
            : `Apply failed with ${conflicts.length} conflicts: ${conflicts.map((c) => `conflicts with ${c}:\n- .spec.replicas`).join('\n')}`,
        );
      }
      if (force) owners.clear();
      owners.set(manager, { operation: 'Apply' });
      deployment.spec.replicas = replicas;
    }
    this.replicasOwners.set(key, owners);
    deployment.metadata.resourceVersion = String(this.version++);
    return [200, deployment];
  }

  private async deployment(
    req: IncomingMessage,
    namespace: string,
    name: string,
    query: URLSearchParams,
    text: string,
  ): Promise<Answer> {
    const method = req.method ?? 'GET';
    const verb = { GET: 'get', PATCH: 'patch', PUT: 'update', DELETE: 'delete' }[method] ?? method;
    const request = { verb, name };
    this.deploymentRequests.push(request);
    this.onDeploymentRequest?.(request);
    const refused = this.forbidden(
      this.deploymentsAccess,
      { group: 'apps', plural: 'deployments' },
      verb,
      namespace,
      name,
    );
    if (refused) return refused;
    const key = `${namespace}/${name}`;
    if (method === 'GET') {
      const current = this.deployments.get(key);
      return current ? [200, current] : this.status(404, 'NotFound', `deployments.apps "${name}" not found`);
    }
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (method !== 'PATCH' || contentType !== 'application/apply-patch+yaml') {
      return this.status(415, 'UnsupportedMediaType', `the stand-in takes only server-side applies for Deployments`);
    }
    const manager = query.get('fieldManager');
    if (!manager) {
      return this.status(
        422,
        'Invalid',
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    }
    const force = query.get('force');
    if (force !== null && force !== 'true' && force !== 'false') {
      return this.status(400, 'BadRequest', `force: invalid value "${force}"`);
    }
    // JSON is YAML: the client sends the apply configuration as JSON.
    const body = JSON.parse(text) as {
      apiVersion?: string;
      kind?: string;
      metadata?: { name?: string; namespace?: string };
      spec?: Record<string, unknown>;
    } & Record<string, unknown>;
    if (body.apiVersion !== 'apps/v1' || body.kind !== 'Deployment') {
      return this.status(400, 'BadRequest', `invalid object type: ${body.apiVersion ?? ''}, Kind=${body.kind ?? ''}`);
    }
    if (body.metadata?.name !== name) {
      return this.status(
        400,
        'BadRequest',
        `the name of the object (${body.metadata?.name}) does not match the name on the URL (${name})`,
      );
    }
    const modelled =
      Object.keys(body).every((k) => ['apiVersion', 'kind', 'metadata', 'spec'].includes(k)) &&
      Object.keys(body.metadata).every((k) => k === 'name' || k === 'namespace') &&
      Object.keys(body.spec ?? {}).every((k) => k === 'replicas');
    if (!modelled) return this.status(400, 'BadRequest', 'the stand-in models only spec.replicas of a Deployment');
    // The real API server would create the Deployment from this apply, and refuse it as incomplete.
    if (!this.deployments.has(key)) {
      return this.status(
        422,
        'Invalid',
        `Deployment.apps "${name}" is invalid: [spec.selector: Required value, spec.template.spec.containers: Required value]`,
      );
    }
    const replicas = body.spec?.replicas;
    if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)) {
      return this.status(422, 'Invalid', `Deployment.apps "${name}" is invalid: spec.replicas: Invalid value`);
    }
    return this.applyReplicas(key, name, manager, replicas as number | undefined, force === 'true');
  }

  /** A manager's server-side apply of a Deployment manifest with or without spec.replicas (Helm's upgrade, say). */
  applyManifest(namespace: string, name: string, manager: string, replicas: number | undefined): Answer {
    return this.applyReplicas(`${namespace}/${name}`, name, manager, replicas, false);
  }
}
