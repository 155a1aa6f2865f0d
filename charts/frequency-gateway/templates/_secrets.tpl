{{/*
Where each secret variable comes from. Three kinds of Secret:
- the gateway's own keys (`secrets.existingSecret`; or the Secret the External Secrets Operator makes from a secret
  store, `secrets.externalSecret`; or the Secret the chart makes from `secrets.values`);
- an existing Secret named for one variable (`queueBoard.existingSecret`, `apiTokens.existingSecret`);
- the Secret `<fullname>-generated`, which the chart never renders: its pre-install/pre-upgrade hook
  (secrets-hook.yaml) creates it in the cluster with random values and only adds keys it lacks, so a generated
  value survives `helm template`, Argo CD and Flux, which cannot read the cluster.
Every reference is required (no `optional`): a missing or misspelt key keeps the pod from starting, with
CreateContainerConfigError naming it, instead of a component running unsigned or unprotected.
*/}}

{{/* The Secret with the gateway's own keys (the existing one, the operator's from the store, or the chart's). */}}
{{- define "gateway.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else if include "gateway.externalSecret" . -}}
{{- printf "%s-store" (include "gateway.fullname" . | trunc 57 | trimSuffix "-") -}}
{{- else -}}
{{- include "gateway.fullname" . -}}
{{- end -}}
{{- end -}}

{{/*
`secrets.externalSecret` with its defaults: a release upgraded with --reuse-values from a chart before it has none.
*/}}
{{- define "gateway.externalSecretValues" -}}
{{- $defaults := dict "enabled" false "storeRef" (dict "name" "" "kind" "SecretStore") "refreshInterval" "1h" "remoteKeys" dict -}}
{{- $given := .Values.secrets.externalSecret | default dict -}}
{{- toJson (mergeOverwrite $defaults (deepCopy $given)) -}}
{{- end -}}

{{/* Whether the operator makes the Secret of the gateway's own keys from a store (not with an existing Secret). */}}
{{- define "gateway.externalSecret" -}}
{{- if and (not .Values.secrets.existingSecret) (dig "externalSecret" "enabled" false .Values.secrets) }}true{{ end -}}
{{- end -}}

{{/* Whether the chart makes the Secret of the gateway's own keys from `secrets.values`. */}}
{{- define "gateway.secretFromValues" -}}
{{- if and (not .Values.secrets.existingSecret) (not (dig "externalSecret" "enabled" false .Values.secrets)) }}true{{ end -}}
{{- end -}}

{{/*
Whether one of the gateway's own keys (.key) is supplied: an existing Secret is taken to hold every key it is
asked for; the store, the keys it maps (`secrets.externalSecret.remoteKeys`); the values, the keys set there.
*/}}
{{- define "gateway.ownKeySupplied" -}}
{{- $s := .root.Values.secrets -}}
{{- if $s.existingSecret -}}true
{{- else if dig "externalSecret" "enabled" false $s -}}{{ if hasKey (dig "externalSecret" "remoteKeys" dict $s) .key }}true{{ end }}
{{- else if index $s.values .key -}}true
{{- end -}}
{{- end -}}

{{- define "gateway.generatedSecretName" -}}
{{- printf "%s-generated" (include "gateway.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{/* Which components are deployed: any api, any component that delivers webhooks. */}}
{{- define "gateway.anyApi" -}}
{{- range $name, $c := include "gateway.components" . | fromYaml }}{{ if eq $c.role "api" }}true{{ end }}{{ end -}}
{{- end -}}
{{- define "gateway.anyWebhooks" -}}
{{- range $name, $c := include "gateway.components" . | fromYaml }}{{ if $c.webhooks }}true{{ end }}{{ end -}}
{{- end -}}

{{/* Whether the gateway needs IPFS_BASIC_AUTH_SECRET: an external IPFS with basic authentication. */}}
{{- define "gateway.ipfsBasicAuth" -}}
{{- if and (not .Values.ipfs.enabled) .Values.externalIpfs.basicAuthUser }}true{{ end -}}
{{- end -}}

{{/*
The keys the hook generates into `<fullname>-generated`, as `ensure-secret --key` arguments (KEY or KEY=PREFIX),
as a JSON list; empty when nothing is generated.
*/}}
{{- define "gateway.generatedKeys" -}}
{{- $keys := list -}}
{{- if and (include "gateway.anyWebhooks" .) (not (include "gateway.ownKeySupplied" (dict "root" . "key" "WEBHOOK_SECRET"))) -}}
{{- $keys = append $keys "WEBHOOK_SECRET" -}}
{{- end -}}
{{- if and (include "gateway.anyApi" .) .Values.queueBoard.enabled (not .Values.queueBoard.existingSecret) -}}
{{- $keys = append $keys (printf "QUEUES_BASIC_AUTH=%s:" .Values.queueBoard.user) -}}
{{- end -}}
{{- if and (include "gateway.anyApi" .) .Values.apiTokens.enabled (not .Values.apiTokens.existingSecret) -}}
{{- $keys = append $keys "API_TOKENS=gateway:" -}}
{{- end -}}
{{- toJson $keys -}}
{{- end -}}

{{/* name and key of the Secret a secret variable is read from. */}}
{{- define "gateway.secretRef" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $generated := include "gateway.generatedSecretName" $root -}}
{{- if eq .variable "QUEUES_BASIC_AUTH" -}}
name: {{ default $generated $v.queueBoard.existingSecret }}
key: {{ ternary $v.queueBoard.existingSecretKey "QUEUES_BASIC_AUTH" (ne $v.queueBoard.existingSecret "") }}
{{- else if eq .variable "API_TOKENS" -}}
name: {{ default $generated $v.apiTokens.existingSecret }}
key: {{ ternary $v.apiTokens.existingSecretKey "API_TOKENS" (ne $v.apiTokens.existingSecret "") }}
{{- else if and (eq .variable "WEBHOOK_SECRET") (not (include "gateway.ownKeySupplied" (dict "root" $root "key" "WEBHOOK_SECRET"))) -}}
name: {{ $generated }}
key: WEBHOOK_SECRET
{{- else -}}
name: {{ include "gateway.secretName" $root }}
key: {{ .variable }}
{{- end -}}
{{- end -}}

{{/* Secret variables a component reads (JSON list); each is required where it is referenced. */}}
{{- define "gateway.secretKeys" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $keys := list -}}
{{- if and (ne $c.service "content-watcher") (or (eq $c.role "worker") (eq $c.service "account")) -}}
{{- $keys = append $keys "PROVIDER_ACCOUNT_SEED_PHRASE" -}}
{{- end -}}
{{- if $c.webhooks -}}
{{- $keys = append $keys "WEBHOOK_SECRET" -}}
{{- end -}}
{{- if and (eq $c.role "api") $root.Values.queueBoard.enabled -}}
{{- $keys = append $keys "QUEUES_BASIC_AUTH" -}}
{{- end -}}
{{- if and (eq $c.role "api") $root.Values.apiTokens.enabled -}}
{{- $keys = append $keys "API_TOKENS" -}}
{{- end -}}
{{- if and $c.ipfs (include "gateway.ipfsBasicAuth" $root) -}}
{{- $keys = append $keys "IPFS_BASIC_AUTH_SECRET" -}}
{{- end -}}
{{- toJson $keys -}}
{{- end -}}
