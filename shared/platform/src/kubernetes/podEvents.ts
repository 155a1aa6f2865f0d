import { randomBytes } from 'node:crypto';
import {
  ApiException,
  CoreV1Api,
  Observable,
  V1MicroTime,
  type ConfigurationOptions,
  type CoreV1Event,
  type KubeConfig,
} from '@kubernetes/client-node';
import { redactUrlsIn } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import type { PodReference } from './inCluster.js';

/** Something worth telling whoever runs `kubectl describe pod`. */
export interface PodEvent {
  type: 'Normal' | 'Warning';
  /** Short, UpperCamelCase, machine-readable: what `kubectl get events` shows in its REASON column. */
  reason: string;
  /** What the component was doing (the API server requires it of events with an eventTime). */
  action: string;
  message: string;
}

/** Where a component's pod events go. Recording never waits and never throws. */
export interface PodEventRecorder {
  record(event: PodEvent): void;
  /** Resolves once every event recorded so far has been delivered or given up on. */
  settle(): Promise<void>;
}

export interface KubernetesPodEventsOptions {
  kubeConfig: KubeConfig;
  pod: PodReference;
  /** The component's name: the events' source and reporting component. */
  component: string;
  logger: Logger;
  /** Applied to every message before it leaves the process: the logger's scrubbing of secret values. */
  scrub?: (text: string) => string;
  /** How long one event may take to deliver before it is given up. */
  timeoutMs?: number;
}

/** The API server keeps at most 1 KiB of an event's message; ours are a line that fits on a screen. */
const MESSAGE_LIMIT = 512;

/** Events still in flight beyond this are dropped rather than queued behind an API server that does not answer. */
const MAX_IN_FLIGHT = 16;

const describeFailure = (error: unknown) =>
  error instanceof ApiException ? `the API server answered ${error.code}` : String((error as Error).message ?? error);

/**
 * Records events about the component's own Pod through the core/v1 Event API, the way kubelet and
 * controllers do, so that `kubectl describe pod` shows them. Fire and forget: every event is sent at once
 * with a timeout; a failure is logged at warn the first time (and at debug after that, until an event gets
 * through again), and never reaches the caller.
 */
export class KubernetesPodEvents implements PodEventRecorder {
  private readonly api: CoreV1Api;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timeoutMs: number;
  private failing = false;

  constructor(private readonly options: KubernetesPodEventsOptions) {
    this.api = options.kubeConfig.makeApiClient(CoreV1Api);
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  record(event: PodEvent): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT) {
      this.options.logger.debug({ reason: event.reason }, 'pod event dropped: too many still in flight');
      return;
    }
    const sending: Promise<void> = this.send(event).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  async settle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** The core/v1 Event, as client-go's recorder writes one, with eventTime and the reporting fields set. */
  private body(event: PodEvent): CoreV1Event {
    const { pod, component } = this.options;
    const scrub = this.options.scrub ?? ((text: string) => text);
    const message = scrub(redactUrlsIn(event.message));
    const now = new Date();
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${pod.name}.${randomBytes(8).toString('hex')}`, namespace: pod.namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: pod.name,
        namespace: pod.namespace,
        ...(pod.uid ? { uid: pod.uid } : {}),
      },
      type: event.type,
      reason: event.reason,
      action: event.action,
      message: message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT - 1)}…` : message,
      source: { component },
      reportingComponent: component,
      reportingInstance: pod.name,
      firstTimestamp: now,
      lastTimestamp: now,
      // A MicroTime: the API server insists on six fractional digits, which V1MicroTime writes.
      eventTime: new V1MicroTime(now.getTime()),
      count: 1,
    };
  }

  private async send(event: PodEvent): Promise<void> {
    const { pod, logger } = this.options;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    timer.unref();
    // The client has no timeout of its own; a middleware puts the timer's signal on the request.
    const withTimeout: ConfigurationOptions = {
      middleware: [
        {
          pre: (request) => (request.setSignal(abort.signal), new Observable(Promise.resolve(request))),
          post: (response) => new Observable(Promise.resolve(response)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
    try {
      await this.api.createNamespacedEvent({ namespace: pod.namespace, body: this.body(event) }, withTimeout);
      if (this.failing) logger.info({ pod: pod.name }, 'pod events are recorded again');
      this.failing = false;
    } catch (error) {
      const why = abort.signal.aborted ? `no answer within ${this.timeoutMs} ms` : describeFailure(error);
      const line = { pod: pod.name, namespace: pod.namespace, reason: event.reason };
      if (this.failing) logger.debug(line, `pod event not recorded: ${why}`);
      else logger.warn(line, `cannot record events on pod ${pod.namespace}/${pod.name}: ${why} (more at debug)`);
      this.failing = true;
    } finally {
      clearTimeout(timer);
    }
  }
}
