import { KubeConfig } from '@kubernetes/client-node';

/** The component's own Pod, as the chart passes it in from the downward API. */
export interface PodReference {
  name: string;
  namespace: string;
  /** metadata.uid; `kubectl describe pod` matches events to the pod by it. */
  uid?: string;
}

/** A component running inside a Kubernetes cluster: its Pod, and a client configuration for the API server. */
export interface InCluster {
  pod: PodReference;
  kubeConfig: KubeConfig;
}

/** The variables that place a component in a cluster (see commonVariables). */
export interface PodVariables {
  POD_NAME?: string | undefined;
  POD_NAMESPACE?: string | undefined;
  POD_UID?: string | undefined;
}

/** The API server as the pod's service account reaches it: the address Kubernetes puts in the environment. */
export function serviceAccountKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromCluster();
  return kubeConfig;
}

/**
 * Whether the component runs in a cluster: POD_NAME and POD_NAMESPACE set (the chart fills them from the
 * downward API) and KUBERNETES_SERVICE_HOST present (Kubernetes sets it in every container). Only then do
 * leases become Kubernetes Leases and readiness transitions events on the pod; anywhere else (`make dev`,
 * the tests) the answer is undefined and Redis and the logs do those jobs.
 */
export function inCluster(
  config: PodVariables,
  env: NodeJS.ProcessEnv = process.env,
  loadKubeConfig: () => KubeConfig = serviceAccountKubeConfig,
): InCluster | undefined {
  if (!config.POD_NAME || !config.POD_NAMESPACE || !env.KUBERNETES_SERVICE_HOST) return undefined;
  const pod: PodReference = {
    name: config.POD_NAME,
    namespace: config.POD_NAMESPACE,
    ...(config.POD_UID ? { uid: config.POD_UID } : {}),
  };
  return { pod, kubeConfig: loadKubeConfig() };
}
