import type { ReadinessController, ReadinessTransition } from '../health/index.js';
import type { PodEvent, PodEventRecorder } from './podEvents.js';

/**
 * The pod event that explains a readiness transition, so that `kubectl describe pod` says why the pod is not
 * ready (or when it became ready again):
 * - `DependencyDown` (Warning) / `DependencyUp` (Normal): one check changed;
 * - `NotReady` (Warning) / `Ready` (Normal): readiness as a whole flipped;
 * - `ShuttingDown` (Normal): readiness turned false because the component is stopping, as on every rollout.
 */
export function readinessEvent(transition: ReadinessTransition): PodEvent {
  if (transition.kind === 'check') {
    const dependency = `${transition.required ? '' : 'optional '}dependency ${transition.check}`;
    return transition.status === 'up'
      ? { type: 'Normal', reason: 'DependencyUp', action: 'CheckDependency', message: `${dependency} is up` }
      : {
          type: 'Warning',
          reason: 'DependencyDown',
          action: 'CheckDependency',
          message: `${dependency} is down: ${transition.error ?? 'no reason given'}`,
        };
  }
  const action = 'UpdateReadiness';
  if (transition.ready) return { type: 'Normal', reason: 'Ready', action, message: 'every required dependency is up' };
  if (transition.shuttingDown) {
    return { type: 'Normal', reason: 'ShuttingDown', action, message: 'shutting down: not ready, so traffic drains' };
  }
  const failing = transition.failing.map(({ check, status }) => `${check} is ${status}`).join(', ');
  return { type: 'Warning', reason: 'NotReady', action, message: `not ready: ${failing || 'no check has passed'}` };
}

/** Records every readiness transition as an event on the pod; returns a function that stops it. */
export function recordReadinessEvents(readiness: ReadinessController, recorder: PodEventRecorder): () => void {
  return readiness.onTransition((transition) => recorder.record(readinessEvent(transition)));
}
