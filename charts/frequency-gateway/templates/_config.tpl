{{/* The non-secret variables of a service (its ConfigMap's data), as YAML. */}}
{{- define "gateway.serviceConfig" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $data := dict
  "ENVIRONMENT" $root.Values.environment
  "LOG_LEVEL" $root.Values.logLevel
  "REDIS_URL" (include "gateway.redis.url" $root)
  "FREQUENCY_API_WS_URL" (include "gateway.chain.url" $root)
  "LEADER_LEASE_PREFIX" (include "gateway.fullname" $root)
-}}
{{- if and $root.Values.redis.enabled (eq $root.Values.redis.mode "replicated") -}}
{{- $_ := set $data "REDIS_SENTINELS" (include "gateway.redis.sentinels" $root) -}}
{{- $_ := set $data "REDIS_SENTINEL_NAME" $root.Values.redis.replicated.primaryName -}}
{{- end -}}
{{- if not $root.Values.redis.enabled -}}
{{- with $root.Values.externalRedis.sentinels -}}
{{- $_ := set $data "REDIS_SENTINELS" (join "," .) -}}
{{- $_ := set $data "REDIS_SENTINEL_NAME" $root.Values.externalRedis.sentinelName -}}
{{- end -}}
{{- with $root.Values.externalRedis.clusterNodes -}}
{{- $_ := set $data "REDIS_CLUSTER_NODES" (join "," .) -}}
{{- end -}}
{{- end -}}
{{- $replicatedRedis := or (and $root.Values.redis.enabled (eq $root.Values.redis.mode "replicated")) (and (not $root.Values.redis.enabled) $root.Values.externalRedis.sentinels) -}}
{{- $_ := set $data "REDIS_DURABILITY" ($root.Values.redisDurability | default (ternary "replicated" "acknowledged" (not (empty $replicatedRedis)))) -}}
{{- if ne $c.service "content-watcher" -}}
{{- $_ := set $data "PROVIDER_ID" (include "gateway.chain.providerId" $root) -}}
{{- end -}}
{{- if ne $c.service "account" -}}
{{- $_ := set $data "IPFS_ENDPOINT" (include "gateway.ipfs.endpoint" $root) -}}
{{- $_ := set $data "IPFS_GATEWAY_URL" $root.Values.ipfsGatewayUrl -}}
{{- if and (not $root.Values.ipfs.enabled) $root.Values.externalIpfs.basicAuthUser -}}
{{- $_ := set $data "IPFS_BASIC_AUTH_USER" $root.Values.externalIpfs.basicAuthUser -}}
{{- end -}}
{{- end -}}
{{- /* Every service has a component that sends to URLs clients or operators give (webhooks, callbacks). */ -}}
{{- $_ := set $data "OUTBOUND_POLICY" $root.Values.outbound.policy -}}
{{- with $root.Values.outbound.allowedDestinations -}}
{{- $_ := set $data "OUTBOUND_ALLOWED_DESTINATIONS" (join "," .) -}}
{{- end -}}
{{- with $root.Values.tracing.otlpEndpoint -}}
{{- $_ := set $data "OTEL_EXPORTER_OTLP_ENDPOINT" . -}}
{{- end -}}
{{- if eq $c.service "content-publishing" -}}
{{- $_ := set $data "FILE_UPLOAD_MAX_SIZE_IN_BYTES" (toString (int64 $root.Values.contentPublishing.api.maxUploadBytes)) -}}
{{- end -}}
{{- range $k, $v := (index $root.Values $c.key).config -}}
{{- $_ := set $data $k (toString $v) -}}
{{- end -}}
{{- range $k, $v := $data }}
{{ $k }}: {{ $v | quote }}
{{- end -}}
{{- end -}}
