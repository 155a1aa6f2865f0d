# Shared settings of the local image scripts (sourced by docker-up, docker-down, base, standins, gateway, load).
# The project's own dockerd (Debian's docker.io) with its own data root, exec root, pid file and socket, so it
# never meets another Docker or containerd on the machine.

IMAGES_TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IMAGES_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/frequency-gateway/images"
DOCKER_DIR="${FG_DOCKER_DIR:-/var/lib/frequency-gateway-docker}"
DOCKER_EXEC_ROOT="${FG_DOCKER_EXEC_ROOT:-/run/frequency-gateway-docker}"
DOCKER_SOCKET="${FG_DOCKER_SOCKET:-/run/frequency-gateway-docker.sock}"
DOCKER_PIDFILE="$DOCKER_EXEC_ROOT.pid"
DOCKER_LOCK="$DOCKER_EXEC_ROOT.lock"
# Debian's own client (20.10): a newer `docker` earlier on PATH may lack the buildx plugin BuildKit needs.
DOCKER=/usr/bin/docker
BASE_IMAGE=node:20-trixie-slim

images_die() {
  echo "images: $*" >&2
  exit 1
}

images_need_root() {
  [ "$(id -u)" -eq 0 ] || images_die "$1 needs root (it runs dockerd, debootstrap and iptables); run it as root, e.g. sudo $0"
}

# The Docker engine to use: DOCKER_HOST when the caller set one, else ours (started when it is not answering).
use_docker() {
  [ -x "$DOCKER" ] || images_die "$DOCKER is missing: run dev/cluster/install-packages (Debian's docker.io)"
  if [ -z "${DOCKER_HOST:-}" ]; then
    # docker-up prints progress on stderr and the DOCKER_HOST line on stdout.
    eval "$("$IMAGES_TOOLS/docker-up")"
  fi
  export DOCKER_HOST DOCKER_BUILDKIT=1
}

# Holds the lock on the project dockerd until this script exits, so that two suites starting it at once (the two
# jest runs of `make test` do) take turns: the second finds it answering rather than cleaning up under the first.
# docker-up's own call of docker-down inherits the lock (FG_DOCKER_LOCKED) instead of waiting for itself.
hold_docker_lock() {
  [ -z "${FG_DOCKER_LOCKED:-}" ] || return 0
  hold_lock "$DOCKER_LOCK"
  export FG_DOCKER_LOCKED=1
}

# Holds an exclusive lock on FILE until this script exits (its descriptor in held_lock_fd).
hold_lock() {
  exec {held_lock_fd}>"$1"
  flock "$held_lock_fd"
}

docker_answers() {
  DOCKER_HOST="unix://$DOCKER_SOCKET" "$DOCKER" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# When the project dockerd answers: says so and prints the DOCKER_HOST line (docker-up's output).
print_answering_host() {
  docker_answers || return 1
  echo "images: dockerd already answers on $DOCKER_SOCKET" >&2
  echo "export DOCKER_HOST=unix://$DOCKER_SOCKET"
}
