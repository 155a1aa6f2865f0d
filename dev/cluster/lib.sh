# Shared settings of the local cluster scripts (sourced by build, up, down, kubectl, provisioner).
# Everything the cluster keeps lives in three places, so `down` knows exactly what to remove:
#   $CLUSTER_CACHE  built binaries and images (kept between machines by CI's ~/.cache)
#   $CLUSTER_STATE  certificates, etcd data, kubelet and containerd roots, volumes, logs (kept across down/up)
#   $CLUSTER_RUN    sockets, pid files and containerd's runtime state (gone after down)

CLUSTER_TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLUSTER_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/frequency-gateway/cluster"
CLUSTER_BIN="$CLUSTER_CACHE/bin"
CLUSTER_IMAGES="$CLUSTER_CACHE/images"
CLUSTER_STATE="${FG_CLUSTER_STATE:-/var/lib/frequency-gateway-cluster}"
CLUSTER_RUN="${FG_CLUSTER_RUN:-/run/frequency-gateway-cluster}"
CLUSTER_KUBECONFIG="$CLUSTER_STATE/kubeconfig"
CONTAINERD_SOCKET="$CLUSTER_RUN/containerd.sock"

KUBERNETES_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
COREDNS_VERSION=v1.15.0

NODE_NAME=frequency-gateway-node
API_PORT="${FG_CLUSTER_API_PORT:-6443}"
ETCD_CLIENT_PORT=2379
ETCD_PEER_PORT=2380
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SERVICE_IP=10.96.0.1
DNS_SERVICE_IP=10.96.0.10
BRIDGE=fgbr0
CNI_NETWORK=fg-pods

# Local image names: only this cluster uses them, so they name no registry.
PAUSE_IMAGE=frequency-gateway.local/pause:1
COREDNS_IMAGE="frequency-gateway.local/coredns:${COREDNS_VERSION#v}"

# Monitoring (dev/cluster/monitoring, built by `dev/cluster/build monitoring`): Prometheus run by
# prometheus-operator, whose version is the one its wrapper module (dev/cluster/prometheus-operator) requires.
PROMETHEUS_VERSION=v3.16.0
PROMETHEUS_OPERATOR_VERSION="$(awk '$1 == "github.com/prometheus-operator/prometheus-operator" { print $2 }' "$CLUSTER_TOOLS/prometheus-operator/go.mod")"
PROMETHEUS_IMAGE="frequency-gateway.local/prometheus:${PROMETHEUS_VERSION#v}"
PROMETHEUS_OPERATOR_IMAGE="frequency-gateway.local/prometheus-operator:${PROMETHEUS_OPERATOR_VERSION#v}"
PROMETHEUS_CONFIG_RELOADER_IMAGE="frequency-gateway.local/prometheus-config-reloader:${PROMETHEUS_OPERATOR_VERSION#v}"

# KEDA (dev/cluster/autoscaling, built by `dev/cluster/build keda`): its operator and metrics API server, at the
# version its wrapper module (dev/cluster/keda) requires.
KEDA_VERSION="$(awk '$1 == "github.com/kedacore/keda/v2" { print $2 }' "$CLUSTER_TOOLS/keda/go.mod")"
KEDA_OPERATOR_IMAGE="frequency-gateway.local/keda:${KEDA_VERSION#v}"
KEDA_ADAPTER_IMAGE="frequency-gateway.local/keda-metrics-apiserver:${KEDA_VERSION#v}"

# The host processes `up` starts, in start order; `down` stops them in reverse.
CLUSTER_PROCESSES=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy provisioner)

die() {
  echo "cluster: $*" >&2
  exit 1
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "$1 needs root (it runs containerd, the kubelet and iptables); run it as root, e.g. sudo $0"
}

# The host's first global IPv4 address: kube-apiserver refuses a loopback advertise address and the kubelet a
# loopback node IP.
host_ip() {
  ip -4 -o addr show scope global | awk '{ split($4, a, "/"); print a[1]; exit }'
}

pid_file() { echo "$CLUSTER_RUN/$1.pid"; }

# True while a process exists and has not exited: a zombie counts as gone (this machine's init reaps orphans
# only now and then, and kill -0 succeeds on a zombie).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

# True when the process recorded for a component is alive.
running() {
  local file pid
  file="$(pid_file "$1")"
  [ -f "$file" ] || return 1
  pid="$(cat "$file")"
  [ -n "$pid" ] && alive "$pid"
}

kubectl_cluster() {
  KUBECONFIG="$CLUSTER_KUBECONFIG" "$CLUSTER_BIN/kubectl" "$@"
}

ctr_cluster() {
  ctr --address "$CONTAINERD_SOCKET" --namespace k8s.io "$@"
}

# IP forwarding is needed by both the cluster and the project's dockerd (dev/images). Whichever starts first
# records the host's value here; whichever stops last puts it back.
IP_FORWARD_SAVED=/run/frequency-gateway-ip-forward.saved
DOCKER_SOCKET_PATH=/run/frequency-gateway-docker.sock

save_ip_forward() {
  [ -f "$IP_FORWARD_SAVED" ] || sysctl -n net.ipv4.ip_forward >"$IP_FORWARD_SAVED"
}

# restore_ip_forward OTHER_SOCKET: unless the other user (its socket still there) needs forwarding.
restore_ip_forward() {
  [ -f "$IP_FORWARD_SAVED" ] && [ ! -S "$1" ] || return 0
  sysctl -q -w "net.ipv4.ip_forward=$(cat "$IP_FORWARD_SAVED")"
  rm -f "$IP_FORWARD_SAVED"
}

# iptables-nft makes a table (filter, nat, mangle) the first time anyone adds to it and never removes it. Once
# the cluster and the dockerd are gone, a table with no rule, no chain of its own and ACCEPT policies is
# removed with nft (Debian's nftables, when installed), so the host looks as it did before.
drop_empty_tables() {
  command -v nft >/dev/null 2>&1 || return 0
  local family table listing content
  for family in ip ip6; do
    for table in filter nat mangle raw; do
      listing="$(nft list table "$family" "$table" 2>/dev/null)" || continue
      # Anything but the table, its built-in chains (named in capitals, as iptables makes them) with an accept
      # policy, and closing braces: someone's rule or chain, so the table stays.
      content="$(grep -vE '^table |^[[:space:]]*chain (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) \{$|^[[:space:]]*type [a-z]+ hook [a-z]+ priority [a-z0-9+-]+; policy accept;$|^[[:space:]]*\}$|^[[:space:]]*$' <<<"$listing" || true)"
      [ -z "$content" ] || continue
      # Another clean-up may have dropped it since the listing: only a table still there is a failure.
      nft delete table "$family" "$table" 2>/dev/null || ! nft list table "$family" "$table" >/dev/null 2>&1 ||
        die "could not remove the empty $family $table table: nft delete table $family $table"
    done
  done
}
