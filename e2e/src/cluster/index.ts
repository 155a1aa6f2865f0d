// What the cluster suites (e2e/cluster) use: the local Kubernetes, one release of the chart, and the gateway's
// clients as they reach it from the host.
export * from '../commands.js';
export * from './chartRegistry.js';
export * from './kubeApi.js';
export * from './prepare.js';
export * from './release.js';
export * from './receiver.js';
export { SiwfUser } from '@frequency-gateway/devstack/siwf';
export * from './gateway.js';
export * from './observe.js';
export * from './portForward.js';
export * from './previousRelease.js';
export * from './redisGroup.js';
export * from './suiteRelease.js';
export * from './externalSecrets.js';
