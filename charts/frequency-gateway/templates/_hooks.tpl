{{/*
A Helm hook that runs gateway commands, one container each, in a Job of its own, with a ServiceAccount, a Role
(`.rules`), a RoleBinding and a NetworkPolicy (the Kubernetes API only) of its own. They are created before the
Job (lower weight) and deleted, all of them, once the hook has succeeded (Helm deletes `hook-succeeded` hooks after
every hook of the event ran; Argo CD, which runs them as PreSync hooks, at the end of the sync). Arguments (dict):
  root        the chart's root context
  name        resource name (the Job's gets a hash of its pod)
  component   the app.kubernetes.io/component label of all of them
  events      the helm.sh/hook events
  rules       the Role's rules
  containers  list of {name, args}: each runs `gateway <args…>` in the pod's namespace ($(POD_NAMESPACE))
*/}}
{{- define "gateway.hook" -}}
{{- $root := .root -}}
{{- $ctx := dict "root" $root "name" .component -}}
{{- $pod := include "gateway.hookPod" . -}}
{{- $first := dict "events" .events "weight" "-20" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .name }}
  labels:
    {{- include "gateway.componentLabels" $ctx | nindent 4 }}
  {{- include "gateway.annotations" (dict "root" $root "extra" (include "gateway.hookAnnotations" $first | fromYaml)) | nindent 2 }}
automountServiceAccountToken: false
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .name }}
  labels:
    {{- include "gateway.componentLabels" $ctx | nindent 4 }}
  {{- include "gateway.annotations" (dict "root" $root "extra" (include "gateway.hookAnnotations" $first | fromYaml)) | nindent 2 }}
rules:
  {{- toYaml .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .name }}
  labels:
    {{- include "gateway.componentLabels" $ctx | nindent 4 }}
  {{- include "gateway.annotations" (dict "root" $root "extra" (include "gateway.hookAnnotations" $first | fromYaml)) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ .name }}
    namespace: {{ $root.Release.Namespace }}
{{- if $root.Values.networkPolicy.enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ .name }}
  labels:
    {{- include "gateway.componentLabels" $ctx | nindent 4 }}
  {{- include "gateway.annotations" (dict "root" $root "extra" (include "gateway.hookAnnotations" $first | fromYaml)) | nindent 2 }}
spec:
  podSelector:
    matchLabels:
      {{- include "gateway.componentSelector" $ctx | nindent 6 }}
  policyTypes: [Ingress, Egress]
  # Nothing calls it; it calls only the Kubernetes API (by the address Kubernetes puts in its environment: no DNS).
  ingress: []
  egress:
    {{- include "gateway.egress.kubernetesApi" $root | nindent 4 }}
{{- end }}
---
apiVersion: batch/v1
kind: Job
metadata:
  # A new name whenever the pod changes: a Job's pod template is immutable, so `kubectl apply` of a changed Job
  # under the same name would be refused.
  name: {{ printf "%s-%s" .name ($pod | sha256sum | trunc 8) }}
  labels:
    {{- include "gateway.componentLabels" $ctx | nindent 4 }}
  {{- include "gateway.annotations" (dict "root" $root "extra" (include "gateway.hookAnnotations" (dict "events" .events "weight" "-10") | fromYaml)) | nindent 2 }}
spec:
  backoffLimit: 4
  activeDeadlineSeconds: 600
  # For appliers that do not run hooks (kubectl apply): the finished Job goes by itself.
  ttlSecondsAfterFinished: 600
  template:
    {{- $pod | nindent 4 }}
{{- end -}}

{{- define "gateway.hookAnnotations" -}}
helm.sh/hook: {{ .events }}
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{- define "gateway.hookPod" -}}
{{- $root := .root -}}
metadata:
  labels:
    {{- include "gateway.componentLabels" (dict "root" $root "name" .component) | nindent 4 }}
spec:
  serviceAccountName: {{ .name }}
  # The token is the hook's only way to do its work: the Role above.
  automountServiceAccountToken: true
  enableServiceLinks: false
  restartPolicy: Never
  {{- include "gateway.imagePullSecrets" (dict "global" $root.Values.global "own" $root.Values.imagePullSecrets) | nindent 2 }}
  {{- with $root.Values.componentDefaults.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml $root.Values.podSecurityContext | nindent 4 }}
  containers:
    {{- range .containers }}
    - name: {{ .name }}
      image: {{ include "gateway.image" $root | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args:
        {{- range .args }}
        - {{ . | quote }}
        {{- end }}
        - --namespace=$(POD_NAMESPACE)
      env:
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
      resources:
        {{- toYaml $root.Values.hooks.resources | nindent 8 }}
      securityContext:
        {{- toYaml $root.Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
    {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: 16Mi
  {{- with $root.Values.componentDefaults.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.componentDefaults.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.componentDefaults.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
