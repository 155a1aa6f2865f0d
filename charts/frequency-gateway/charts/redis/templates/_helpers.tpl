{{/* Resource name: <release>-redis unless overridden. */}}
{{- define "redis.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "redis.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "redis.labels" -}}
{{ include "redis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: frequency-gateway
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
The Secret holding the password, and its key: the existing one; or the one rendered from `auth.password`; or
`<fullname>-generated` (key redis-password), made in the cluster by the gateway chart's hook.
*/}}
{{- define "redis.secretName" -}}
{{- if .Values.auth.existingSecret -}}
{{ .Values.auth.existingSecret }}
{{- else if .Values.auth.password -}}
{{ include "redis.fullname" . }}
{{- else -}}
{{ printf "%s-generated" (include "redis.fullname" . | trunc 53 | trimSuffix "-") }}
{{- end -}}
{{- end -}}
{{- define "redis.secretKey" -}}
{{- if .Values.auth.existingSecret }}{{ .Values.auth.existingSecretPasswordKey }}{{ else }}redis-password{{ end -}}
{{- end -}}

{{/* Restricted Pod Security for a container. */}}
{{- define "redis.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
Replicated mode: the Redis servers' StatefulSet and the Sentinels', each with a headless Service whose pod names
(`<pod>.<service>.<namespace>.svc`) are what the servers and Sentinels announce, so that they survive pod restarts
(a restarted pod keeps its name, not its address).
*/}}
{{- define "redis.nodeName" -}}
{{ include "redis.fullname" . | trunc 58 | trimSuffix "-" }}-node
{{- end -}}
{{- define "redis.sentinelName" -}}
{{ include "redis.fullname" . | trunc 54 | trimSuffix "-" }}-sentinel
{{- end -}}
{{- define "redis.nodeHost" -}}
{{ printf "%s-headless.%s.svc" (include "redis.nodeName" .) .Release.Namespace }}
{{- end -}}
{{- define "redis.sentinelHost" -}}
{{ printf "%s-headless.%s.svc" (include "redis.sentinelName" .) .Release.Namespace }}
{{- end -}}

{{/* Pod anti-affinity of one replicated StatefulSet (`.component`): soft (preferred) or hard (required). */}}
{{- define "redis.antiAffinity" -}}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (merge (include "redis.selectorLabels" .root | fromYaml) (dict "app.kubernetes.io/component" .component))) -}}
podAntiAffinity:
{{- if eq .root.Values.replicated.podAntiAffinity "hard" }}
  requiredDuringSchedulingIgnoredDuringExecution:
    {{- toYaml (list $term) | nindent 4 }}
{{- else }}
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        {{- toYaml $term | nindent 8 }}
{{- end }}
{{- end -}}

{{/* The pod security context every Redis pod runs with (restricted Pod Security; the image's redis user). */}}
{{- define "redis.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 999
runAsGroup: 999
fsGroup: 999
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The password, as the containers read it (env), never in the pod spec. */}}
{{- define "redis.passwordEnv" -}}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "redis.secretName" . }}
      key: {{ include "redis.secretKey" . }}
# redis-cli (probes, the start scripts) authenticates from this variable; Sentinels take the same password.
- name: REDISCLI_AUTH
  valueFrom:
    secretKeyRef:
      name: {{ include "redis.secretName" . }}
      key: {{ include "redis.secretKey" . }}
{{- end -}}

{{/* An image with global.imageRegistry in place of its registry, as the gateway chart's gateway.withRegistry. */}}
{{- define "redis.image" -}}
{{- $registry := (.global | default dict).imageRegistry | default "" | trimSuffix "/" -}}
{{- if $registry }}{{ printf "%s/%s" $registry (regexReplaceAll "^([^/]*[.:][^/]*|localhost)/" .image "") }}{{ else }}{{ .image }}{{ end -}}
{{- end -}}
