/** The labels of what the suites run beside the release (left out of the uninstall suite's count). */
export const suiteLabels = (name: string) => ({
  'app.kubernetes.io/name': name,
  'app.kubernetes.io/part-of': 'frequency-gateway-e2e',
});

/**
 * A Pod of the suites' own (a receiver, a registry) that meets the restricted Pod Security Standard: non-root as
 * uid/gid 1000, the runtime's seccomp profile, no service-account token; its one container with no privilege
 * escalation, no capabilities and a read-only root filesystem.
 */
export function restrictedPod(
  name: string,
  labels: Record<string, string>,
  container: Record<string, unknown>,
  volumes: object[] = [],
): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 5,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        fsGroup: 1000,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          imagePullPolicy: 'Never',
          ...container,
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
      volumes,
    },
  };
}
