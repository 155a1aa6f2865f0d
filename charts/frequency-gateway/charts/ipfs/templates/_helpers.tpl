{{/* Resource name: <release>-ipfs unless overridden. */}}
{{- define "ipfs.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ipfs.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ipfs.labels" -}}
{{ include "ipfs.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: frequency-gateway
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* An image with global.imageRegistry in place of its registry, as the gateway chart's gateway.withRegistry. */}}
{{- define "ipfs.image" -}}
{{- $registry := (.global | default dict).imageRegistry | default "" | trimSuffix "/" -}}
{{- if $registry }}{{ printf "%s/%s" $registry (regexReplaceAll "^([^/]*[.:][^/]*|localhost)/" .image "") }}{{ else }}{{ .image }}{{ end -}}
{{- end -}}
