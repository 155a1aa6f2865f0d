import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { LeaseAttempt, LeaseLock } from './lease.js';

/**
 * A Lease's name is a DNS subdomain: lower-case alphanumerics and '-' here, at most 253 characters (a release's
 * prefix, the service and the loop together pass 63 with a long release name, and a cut there could make two
 * loops share one Lease).
 */
export function leaseObjectName(name: string): string {
  const cleaned = name
    .replace(/[{}]/g, '') // a Redis keyspace's hash-tag braces are no part of the name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return cleaned.slice(0, 253).replace(/-+$/, '') || 'lease';
}

const statusOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);

/**
 * A `coordination.k8s.io/v1` Lease, with the rules of client-go's leader election: a holder is deposed only
 * after its lease has gone unrenewed for the lease duration *as observed on our own clock*, and every write
 * carries the resourceVersion it read, so that two candidates can never both win (the loser gets 409).
 */
export class KubernetesLeaseLock implements LeaseLock {
  readonly description: string;
  private readonly api: CoordinationV1Api;
  private observed?: { key: string; at: number };

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
    this.description = `kubernetes lease ${namespace}/${name}`;
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async tryAcquireOrRenew(identity: string, leaseDurationMs: number): Promise<LeaseAttempt> {
    // acquireTime and renewTime are MicroTimes: the API server refuses anything but six fractional digits,
    // and a plain Date is written with three.
    const now = new V1MicroTime();
    const durationSeconds = Math.max(1, Math.ceil(leaseDurationMs / 1000));
    const current = await this.read();
    if (!current) {
      const body: V1Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.name, namespace: this.namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      };
      try {
        const created = await this.api.createNamespacedLease({ namespace: this.namespace, body });
        this.observed = { key: created.metadata?.resourceVersion ?? '', at: Date.now() };
        return { held: true, holder: identity, token: 0 };
      } catch (error) {
        if (statusOf(error) === 409) return { held: false, token: 0 };
        throw error;
      }
    }

    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const transitions = spec.leaseTransitions ?? 0;
    // client-go compares records, not clocks: expiry is measured from when *we* last saw the record change,
    // and every change of the record changes its resourceVersion.
    const key = current.metadata?.resourceVersion ?? '';
    if (this.observed?.key !== key) this.observed = { key, at: Date.now() };
    const heldByOther = holder !== '' && holder !== identity;
    const expiresAt = this.observed.at + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && expiresAt > Date.now()) return { held: false, holder, token: transitions };

    const takingOver = holder !== identity;
    const token = takingOver ? transitions + 1 : transitions;
    const body: V1Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: takingOver ? now : (spec.acquireTime ?? now),
        renewTime: now,
        leaseTransitions: token,
      },
    };
    try {
      const written = await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body });
      this.observed = { key: written.metadata?.resourceVersion ?? '', at: Date.now() };
      return { held: true, holder: identity, token };
    } catch (error) {
      if (statusOf(error) === 409) return { held: false, token: transitions };
      throw error;
    }
  }

  async release(identity: string): Promise<void> {
    const current = await this.read();
    if (!current || current.spec?.holderIdentity !== identity) return;
    const now = new V1MicroTime();
    const body: V1Lease = {
      ...current,
      // As client-go does on release: no holder, and a one-second lease so that candidates move at once.
      spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now },
    };
    try {
      await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body });
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }
}
