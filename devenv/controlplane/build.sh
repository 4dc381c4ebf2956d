#!/usr/bin/env bash
# Builds a Go module's commands (every folder under cmd/) into a cache outside the repository,
# keyed by the content of the module and the build flags: by default this one (etcd,
# kube-apiserver, kube-controller-manager, kubectl), or the module folder given as the argument
# (devenv/node: kubelet, kube-proxy, pause). A warm cache is a no-op. Concurrent runs wait for
# each other. Prints the bin dir last.
set -euo pipefail
here="$(cd "${1:-$(dirname "$0")}" && pwd)"
cd "$here"
version=$(awk '$1=="k8s.io/kubernetes"{print $2}' go.mod)
minor=$(echo "$version" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/client-go/pkg/version.gitVersion=${version}"
mapfile -t binaries < <(cd cmd && LC_ALL=C ls -d -- */ | tr -d /)
key=$( (cat go.mod go.sum cmd/*/main.go; echo "$ldflags ${binaries[*]} CGO_ENABLED=0 -trimpath") | sha256sum | cut -c1-16)
root="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/$(basename "$here")"
bin="$root/$key/bin"
mkdir -p "$root"

complete() { for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done; }

exec 9>"$root/.build.lock"
flock 9
if complete; then
  echo "$(basename "$here") binaries up to date ($key)" >&2
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
partial="$root/$key/bin.partial.$$"
trap 'rm -rf "$partial"' EXIT
mkdir -p "$partial"
export CGO_ENABLED=0
started=$(date +%s)
for b in "${binaries[@]}"; do
  echo "building $b (kubernetes $version)..." >&2
  # -p 2: two cores; more parallel compiles only add memory pressure.
  go build -trimpath -p "${CONTROLPLANE_BUILD_JOBS:-2}" -ldflags "$ldflags" -o "$partial/$b" "./cmd/$b"
done
rm -rf "$bin"
mv "$partial" "$bin"
echo "$version" > "$root/$key/VERSION"
echo "built in $(( $(date +%s) - started )) s" >&2
echo "$bin"
