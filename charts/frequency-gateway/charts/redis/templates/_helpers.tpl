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
