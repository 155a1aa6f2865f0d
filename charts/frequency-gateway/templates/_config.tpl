{{/* The non-secret variables of a service (its ConfigMap's data), as YAML. */}}
{{- define "gateway.serviceConfig" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $data := dict
  "ENVIRONMENT" $root.Values.environment
  "LOG_LEVEL" $root.Values.logLevel
  "REDIS_URL" (include "gateway.redis.url" $root)
  "FREQUENCY_API_WS_URL" (include "gateway.chain.url" $root)
-}}
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

{{/* Secret variables a component reads, each from the gateway's Secret; absent keys are allowed. */}}
{{- define "gateway.secretKeys" -}}
{{- $keys := list -}}
{{- if and (ne .service "content-watcher") (or (eq .role "worker") (eq .service "account")) -}}
{{- $keys = append $keys "PROVIDER_ACCOUNT_SEED_PHRASE" -}}
{{- end -}}
{{- if .webhooks -}}
{{- $keys = append $keys "WEBHOOK_SECRET" -}}
{{- end -}}
{{- if eq .role "api" -}}
{{- $keys = append $keys "QUEUES_BASIC_AUTH" -}}
{{- end -}}
{{- if .ipfs -}}
{{- $keys = append $keys "IPFS_BASIC_AUTH_SECRET" -}}
{{- end -}}
{{- toJson $keys -}}
{{- end -}}
