{{/* Resource name prefix: <release>-frequency-gateway, or <release> when it already holds the chart name. */}}
{{- define "gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gateway.labels" -}}
{{ include "gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: frequency-gateway
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The `annotations:` of a resource of this chart: `commonAnnotations` with the resource's own (`extra`, a dict) over
them; nothing when both are empty. Call with (dict "root" $ "extra" …), at the indentation of `labels:`.
*/}}
{{- define "gateway.annotations" -}}
{{- $all := mergeOverwrite (deepCopy (.root.Values.commonAnnotations | default dict)) (deepCopy (.extra | default dict)) -}}
{{- with $all }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
An image reference with `global.imageRegistry` in place of its registry (the first part of the name when it names
a host: it holds a dot or a colon, or is localhost), or in front of it; as it is when none is set. Call with
(dict "image" "<name>:<tag>" "global" .Values.global). The subcharts have the same (redis.image, ipfs.image).
*/}}
{{- define "gateway.withRegistry" -}}
{{- $registry := (.global | default dict).imageRegistry | default "" | trimSuffix "/" -}}
{{- if $registry }}{{ printf "%s/%s" $registry (regexReplaceAll "^([^/]*[.:][^/]*|localhost)/" .image "") }}{{ else }}{{ .image }}{{ end -}}
{{- end -}}

{{/* `imagePullSecrets:` of a pod: `global.imagePullSecrets` and `own` (a list), or nothing. Call with (dict "global" .Values.global "own" …). */}}
{{- define "gateway.imagePullSecrets" -}}
{{- $all := concat ((.global | default dict).imagePullSecrets | default list) (.own | default list) -}}
{{- with $all }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
The six components. Each entry: the service it belongs to, the values key of that service, its role (the
argument of the image's command), its HTTP port, and what it talks to. `include` + `fromYaml` turns it into a
dict that every per-component template ranges over, so a component is described once.
*/}}
{{- define "gateway.componentTable" -}}
account-api: { service: account, key: account, role: api, port: 3013, chain: true, ipfs: false, webhooks: false }
account-worker: { service: account, key: account, role: worker, port: 3023, chain: true, ipfs: false, webhooks: true }
content-publishing-api: { service: content-publishing, key: contentPublishing, role: api, port: 3010, chain: true, ipfs: true, webhooks: false }
content-publishing-worker: { service: content-publishing, key: contentPublishing, role: worker, port: 3020, chain: true, ipfs: true, webhooks: true }
content-watcher-api: { service: content-watcher, key: contentWatcher, role: api, port: 3011, chain: false, ipfs: false, webhooks: false }
content-watcher-worker: { service: content-watcher, key: contentWatcher, role: worker, port: 3021, chain: true, ipfs: true, webhooks: true }
{{- end -}}

{{/*
The enabled components as a dict name -> entry, each entry carrying `settings`: componentDefaults overlaid with
the component's own values (`<service>.<role>`).
*/}}
{{- define "gateway.components" -}}
{{- $out := dict -}}
{{- range $name, $c := include "gateway.componentTable" . | fromYaml -}}
{{- $service := index $.Values $c.key -}}
{{- if $service.enabled -}}
{{- $own := deepCopy (index $service $c.role | default dict) -}}
{{- $settings := mergeOverwrite (deepCopy $.Values.componentDefaults) $own -}}
{{- $_ := set $c "settings" $settings -}}
{{- $_ := set $out $name $c -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- /* Non-empty when something else owns the component's replica count: its HPA, or KEDA for a worker. */ -}}
{{- define "gateway.autoscaled" -}}
{{- if or .settings.autoscaling.enabled (and (eq .role "worker") .settings.keda.enabled) -}}true{{- end -}}
{{- end -}}

{{- define "gateway.componentLabels" -}}
{{ include "gateway.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "gateway.componentSelector" -}}
{{ include "gateway.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "gateway.image" -}}
{{- $image := ternary (printf "%s@%s" .Values.image.repository .Values.image.digest) (printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag)) (not (empty .Values.image.digest)) -}}
{{- include "gateway.withRegistry" (dict "image" $image "global" .Values.global) -}}
{{- end -}}

{{- /* The devchain's image: the components' unless devchain.imageTag pins a tag of the same repository. */ -}}
{{- define "gateway.devchainImage" -}}
{{- if .Values.devchain.imageTag -}}
{{- include "gateway.withRegistry" (dict "image" (printf "%s:%s" .Values.image.repository .Values.devchain.imageTag) "global" .Values.global) -}}
{{- else -}}
{{ include "gateway.image" . }}
{{- end -}}
{{- end -}}

{{- define "gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ default (include "gateway.fullname" .) .Values.serviceAccount.name }}
{{- else -}}
{{ default "default" .Values.serviceAccount.name }}
{{- end -}}
{{- end -}}


{{/* Redis: the URL (never with a password) and where the password is. */}}
{{- define "gateway.redis.fullname" -}}
{{- if .Values.redis.fullnameOverride -}}
{{- .Values.redis.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-redis" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gateway.redis.url" -}}
{{- if and .Values.redis.enabled (eq .Values.redis.mode "replicated") -}}
{{- /* Through the Sentinels (REDIS_SENTINELS): the URL gives the database; its host is not used. */ -}}
redis://{{ include "gateway.redis.nodeName" . }}-headless:6379/0
{{- else if .Values.redis.enabled -}}
redis://{{ include "gateway.redis.fullname" . }}:6379/0
{{- else -}}
{{ required "externalRedis.url is required when redis.enabled is false" .Values.externalRedis.url }}
{{- end -}}
{{- end -}}

{{/* The bundled replicated Redis: its servers' StatefulSet, and its Sentinels as REDIS_SENTINELS lists them. */}}
{{- define "gateway.redis.nodeName" -}}
{{ include "gateway.redis.fullname" . | trunc 58 | trimSuffix "-" }}-node
{{- end -}}
{{- define "gateway.redis.sentinels" -}}
{{- $name := printf "%s-sentinel" (include "gateway.redis.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- $nodes := list -}}
{{- range $i := until (int .Values.redis.replicated.sentinels) -}}
{{- $nodes = append $nodes (printf "%s-%d.%s-headless.%s.svc:26379" $name $i $name $.Release.Namespace) -}}
{{- end -}}
{{ join "," $nodes }}
{{- end -}}

{{/* Whether the bundled Redis's password is generated by the chart's hook (none given, none in an existing Secret). */}}
{{- define "gateway.redis.generated" -}}
{{- if and .Values.redis.enabled (not .Values.redis.auth.password) (not .Values.redis.auth.existingSecret) -}}
true
{{- end -}}
{{- end -}}

{{/* The Secret the hook fills with the bundled Redis's password; the redis subchart names it the same way. */}}
{{- define "gateway.redis.generatedSecretName" -}}
{{- printf "%s-generated" (include "gateway.redis.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{/* name and key of the Secret holding the Redis password; empty when there is none. */}}
{{- define "gateway.redis.passwordRef" -}}
{{- if .Values.redis.enabled -}}
{{- if .Values.redis.auth.existingSecret -}}
name: {{ .Values.redis.auth.existingSecret }}
key: {{ .Values.redis.auth.existingSecretPasswordKey }}
{{- else if .Values.redis.auth.password -}}
name: {{ include "gateway.redis.fullname" . }}
key: redis-password
{{- else -}}
name: {{ include "gateway.redis.generatedSecretName" . }}
key: redis-password
{{- end -}}
{{- else if .Values.externalRedis.existingSecret -}}
name: {{ .Values.externalRedis.existingSecret }}
key: {{ .Values.externalRedis.existingSecretPasswordKey }}
{{- else if .Values.externalRedis.password -}}
name: {{ include "gateway.fullname" . }}-redis
key: redis-password
{{- end -}}
{{- end -}}

{{/*
name and key of the Secret holding the Sentinels' password; empty when there is none. The bundled replicated
Redis's Sentinels take the Redis password.
*/}}
{{- define "gateway.redis.sentinelPasswordRef" -}}
{{- if and .Values.redis.enabled (eq .Values.redis.mode "replicated") -}}
{{ include "gateway.redis.passwordRef" . }}
{{- else if and (not .Values.redis.enabled) .Values.externalRedis.sentinels -}}
{{- if and .Values.externalRedis.existingSecret .Values.externalRedis.existingSecretSentinelPasswordKey -}}
name: {{ .Values.externalRedis.existingSecret }}
key: {{ .Values.externalRedis.existingSecretSentinelPasswordKey }}
{{- else if and (not .Values.externalRedis.existingSecret) .Values.externalRedis.sentinelPassword -}}
name: {{ include "gateway.fullname" . }}-redis
key: sentinel-password
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gateway.ipfs.fullname" -}}
{{- if .Values.ipfs.fullnameOverride -}}
{{- .Values.ipfs.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-ipfs" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gateway.ipfs.endpoint" -}}
{{- if .Values.ipfs.enabled -}}
http://{{ include "gateway.ipfs.fullname" . }}:5001
{{- else -}}
{{ required "externalIpfs.endpoint is required when ipfs.enabled is false" .Values.externalIpfs.endpoint }}
{{- end -}}
{{- end -}}

{{- define "gateway.chain.url" -}}
{{- if .Values.devchain.enabled -}}
ws://{{ include "gateway.fullname" . }}-devchain:9944
{{- else -}}
{{ required "chain.url is required (or set devchain.enabled=true)" (include "gateway.chain.urls" . | fromJsonArray | join ",") }}
{{- end -}}
{{- end -}}

{{/* The nodes of chain.url (a URL, URLs separated by commas, or a list of URLs), as a JSON array. */}}
{{- define "gateway.chain.urls" -}}
{{- $urls := list -}}
{{- if kindIs "slice" .Values.chain.url -}}
{{- $urls = .Values.chain.url -}}
{{- else if .Values.chain.url -}}
{{- range splitList "," .Values.chain.url }}{{ $urls = append $urls (trim .) }}{{ end -}}
{{- end -}}
{{- toJson $urls -}}
{{- end -}}

{{- define "gateway.chain.providerId" -}}
{{- if .Values.chain.providerId -}}
{{ .Values.chain.providerId }}
{{- else if .Values.devchain.enabled -}}
1
{{- else -}}
{{ required "chain.providerId is required" .Values.chain.providerId }}
{{- end -}}
{{- end -}}

{{/* host and port a URL points at, for egress rules: `host:port` with the scheme's default port filled in. */}}
{{- define "gateway.urlPort" -}}
{{- $u := urlParse . -}}
{{- $parts := splitList ":" $u.host -}}
{{- if gt (len $parts) 1 -}}
{{ last $parts }}
{{- else -}}
{{ get (dict "ws" "80" "http" "80" "wss" "443" "https" "443" "redis" "6379" "rediss" "6379") $u.scheme }}
{{- end -}}
{{- end -}}

{{/* Ingress path prefix of an api component in path routing, from its service key. */}}
{{- define "gateway.ingressPrefix" -}}
{{- if eq .root.Values.ingress.routing "path" -}}
{{ index .root.Values.ingress.paths .key }}
{{- end -}}
{{- end -}}
