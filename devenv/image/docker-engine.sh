#!/usr/bin/env bash
# Makes sure a Docker Engine answers on this machine: installs Debian's engine (docker.io, with
# containerd and runc), debootstrap, the CNI plugins, conntrack, Prometheus (for its promtool)
# and BIND 9 with dig when absent, then starts dockerd
# when nothing answers on its socket. Idempotent: installs only what is missing, starts dockerd
# only when none answers.
# The same script serves CI (.ci/run) and developers (README, "Images and compose").
set -euo pipefail

log_dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/docker"
mkdir -p "$log_dir"

answers() { docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
# The test node (devenv/real-node.ts) runs pods with docker.io's containerd and runc, on a bridge
# network from Debian's CNI plugins; kube-proxy flushes conntrack entries with conntrack.
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v conntrack >/dev/null || missing+=(conntrack)
# The monitoring tests (test/e2e/prometheus.test.ts) run Debian's promtool and Prometheus.
command -v promtool >/dev/null || missing+=(prometheus)
# The DNS record tests run Debian's BIND 9 (named) and query it with dig.
[ -x /usr/sbin/named ] || missing+=(bind9)
command -v dig >/dev/null || missing+=(bind9-dnsutils)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "docker-engine.sh: ${missing[*]} missing and not root; install them: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing ${missing[*]} from Debian..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || echo "apt-get update failed; trying the package lists on disk" >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log_dir/apt.log" 2>&1 \
    || { tail -20 "$log_dir/apt.log" >&2; exit 1; }
fi

if ! answers; then
  if [ "$(id -u)" != 0 ]; then
    echo "docker-engine.sh: dockerd is not running and this user cannot start it (not root)" >&2
    exit 1
  fi
  # No init system runs services here: start dockerd (which starts its own containerd) detached,
  # so it outlives this script and the shell that called it. It must not inherit any descriptor
  # above 2: a caller's lock (devenv/image/build.sh holds one) or pipe would stay held for as long
  # as dockerd runs, and every later build waiting for that lock would wait for ever.
  echo "starting dockerd (log: $log_dir/dockerd.log)..." >&2
  (
    cd /
    for path in /proc/$BASHPID/fd/*; do
      fd=${path##*/}
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    # The machine's daemon, not a test run's: without the run's marker, a test run's reaper
    # (test/support/reaper.ts) leaves it running when the run ends.
    exec env -u STATICSITE_TEST_RUN -u STATICSITE_TEST_RUN_DIR setsid nohup dockerd >>"$log_dir/dockerd.log" 2>&1 </dev/null
  ) &
  for _ in $(seq 1 120); do
    answers && break
    sleep 0.5
  done
  if ! answers; then
    echo "docker-engine.sh: dockerd did not answer within 60 s; the end of its log:" >&2
    tail -20 "$log_dir/dockerd.log" >&2
    exit 1
  fi
fi
echo "docker engine: running ($(docker info --format '{{.ServerVersion}}'))" >&2
