{{/*
NetworkPolicy building blocks. Every egress rule names where it goes: a pod selector for what the chart runs, CIDRs
for the rest. The cloud metadata address is taken out of every IPv4 CIDR that holds it, whatever the values say.
*/}}

{{- define "gateway.metadataCidr" -}}169.254.169.254/32{{- end -}}

{{/* An IPv4 address `a.b.c.d` as an integer. */}}
{{- define "gateway.ipv4Int" -}}
{{- $o := splitList "." . -}}
{{- add (mul (atoi (index $o 0)) 16777216) (mul (atoi (index $o 1)) 65536) (mul (atoi (index $o 2)) 256) (atoi (index $o 3)) -}}
{{- end -}}

{{/* 2 to the power of the argument. */}}
{{- define "gateway.pow2" -}}
{{- $v := 1 -}}
{{- range until (int .) }}{{ $v = mul $v 2 }}{{ end -}}
{{- $v -}}
{{- end -}}

{{/* "true" when the IPv4 CIDR `.inner` lies strictly inside the IPv4 CIDR `.outer` (as an `except` must). */}}
{{- define "gateway.ipv4Within" -}}
{{- $inner := splitList "/" .inner -}}
{{- $outer := splitList "/" .outer -}}
{{- if gt (atoi (index $inner 1)) (atoi (index $outer 1)) -}}
{{- $block := include "gateway.pow2" (sub 32 (atoi (index $outer 1))) | int64 -}}
{{- if eq (div (include "gateway.ipv4Int" (index $inner 0) | int64) $block) (div (include "gateway.ipv4Int" (index $outer 0) | int64) $block) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
NetworkPolicyPeers for `.cidrs`, each with those of `.except` that lie inside it (IPv6 ones only under ::/0) and
the metadata address when it lies inside. `.what` names the value in error messages.
*/}}
{{- define "gateway.ipBlocks" -}}
{{- $metadata := include "gateway.metadataCidr" . -}}
{{- $peers := list -}}
{{- range $cidr := .cidrs -}}
{{- $except := list -}}
{{- if contains ":" $cidr -}}
{{- if eq $cidr "::/0" -}}
{{- range $.except }}{{ if contains ":" . }}{{ $except = append $except . }}{{ end }}{{ end -}}
{{- end -}}
{{- else -}}
{{- $parts := splitList "/" $cidr -}}
{{- $hostBits := include "gateway.pow2" (sub 32 (atoi (index $parts 1))) | int64 -}}
{{- if ne (mod (include "gateway.ipv4Int" (index $parts 0) | int64) $hostBits) 0 -}}
{{- fail (printf "%s: %s has host bits set; write the network address of the range" $.what $cidr) -}}
{{- end -}}
{{- if eq $cidr $metadata -}}
{{- fail (printf "%s: %s is the cloud metadata address, which the chart never opens" $.what $cidr) -}}
{{- end -}}
{{- range concat $.except (list $metadata) -}}
{{- if and (not (contains ":" .)) (include "gateway.ipv4Within" (dict "inner" . "outer" $cidr)) -}}
{{- $except = append $except . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $block := dict "cidr" $cidr -}}
{{- with $except | uniq }}{{ $_ := set $block "except" . }}{{ end -}}
{{- $peers = append $peers (dict "ipBlock" $block) -}}
{{- end -}}
{{- toYaml $peers -}}
{{- end -}}

{{/* User-given NetworkPolicyPeers, with the metadata address taken out of any IPv4 ipBlock that holds it. */}}
{{- define "gateway.guardedPeers" -}}
{{- $metadata := include "gateway.metadataCidr" . -}}
{{- $peers := list -}}
{{- range .peers -}}
{{- $peer := deepCopy . -}}
{{- with $peer.ipBlock -}}
{{- if eq .cidr $metadata -}}
{{- fail (printf "%s: %s is the cloud metadata address, which the chart never opens" $.what .cidr) -}}
{{- end -}}
{{- if and (not (contains ":" .cidr)) (include "gateway.ipv4Within" (dict "inner" $metadata "outer" .cidr)) -}}
{{- $_ := set . "except" (append (default list .except) $metadata | uniq) -}}
{{- end -}}
{{- end -}}
{{- $peers = append $peers $peer -}}
{{- end -}}
{{- toYaml $peers -}}
{{- end -}}

{{/* TCP ports as NetworkPolicyPorts. */}}
{{- define "gateway.tcpPorts" -}}
{{- $ports := list -}}
{{- range . }}{{ $ports = append $ports (dict "port" (int .) "protocol" "TCP") }}{{ end -}}
{{- toYaml $ports -}}
{{- end -}}

{{/* The rule to the Kubernetes API server (Leases, Events, the secrets hook). */}}
{{- define "gateway.egress.kubernetesApi" -}}
{{- $api := .Values.networkPolicy.egress.kubernetesApi -}}
# The Kubernetes API server.
- to:
    {{- include "gateway.ipBlocks" (dict "cidrs" $api.cidrs "except" list "what" "networkPolicy.egress.kubernetesApi.cidrs") | nindent 4 }}
  ports:
    {{- include "gateway.tcpPorts" $api.ports | nindent 4 }}
{{- end -}}

{{/* The rule to cluster DNS. */}}
{{- define "gateway.egress.dns" -}}
# Cluster DNS.
- to:
    {{- include "gateway.guardedPeers" (dict "peers" .Values.networkPolicy.egress.dns "what" "networkPolicy.egress.dns") | nindent 4 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end -}}

{{/*
Addresses and CIDRs among `outbound.allowedDestinations`, as CIDRs: what the operator opened for webhooks at the
application level is opened in the NetworkPolicy too. Hostnames cannot be: their addresses are not known here.
*/}}
{{- define "gateway.allowedDestinationCidrs" -}}
{{- $cidrs := list -}}
{{- range .Values.outbound.allowedDestinations -}}
{{- if regexMatch "^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+(/[0-9]+)?$" . -}}
{{- $cidrs = append $cidrs (ternary . (printf "%s/32" .) (contains "/" .)) -}}
{{- else if regexMatch "^[0-9a-fA-F:]*:[0-9a-fA-F:]*(/[0-9]+)?$" . -}}
{{- $cidrs = append $cidrs (ternary . (printf "%s/128" .) (contains "/" .)) -}}
{{- end -}}
{{- end -}}
{{- toJson $cidrs -}}
{{- end -}}

{{- /* The egress rules to Redis (the bundled one by its labels, or externalRedis by address), with its Sentinels. */}}
{{- define "gateway.egress.redis" -}}
{{- $root := . -}}
{{- if $root.Values.redis.enabled -}}
- to:
    - podSelector:
        matchLabels:
          app.kubernetes.io/name: redis
          app.kubernetes.io/instance: {{ $root.Release.Name }}
  ports:
    - port: 6379
      protocol: TCP
    {{- if eq $root.Values.redis.mode "replicated" }}
    # Its Sentinels, which name the primary.
    - port: 26379
      protocol: TCP
    {{- end }}
{{- else -}}
- to:
    {{- include "gateway.ipBlocks" (dict "cidrs" $root.Values.networkPolicy.egress.redis.cidrs "except" list "what" "networkPolicy.egress.redis.cidrs") | nindent 4 }}
  ports:
    - port: {{ include "gateway.urlPort" $root.Values.externalRedis.url | int }}
      protocol: TCP
    {{- /* The Sentinels and the cluster's nodes, each at its own port (the same port once). */}}
    {{- $ports := list (include "gateway.urlPort" $root.Values.externalRedis.url | int) }}
    {{- range concat $root.Values.externalRedis.sentinels $root.Values.externalRedis.clusterNodes }}
    {{- $port := regexReplaceAll "^.*:([0-9]+)$" . "${1}" | int }}
    {{- if not (has $port $ports) }}
    {{- $ports = append $ports $port }}
    - port: {{ $port }}
      protocol: TCP
    {{- end }}
    {{- end }}
{{- end }}
{{- end -}}
