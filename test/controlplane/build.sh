#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl from Go modules into a
# cache outside the repository, keyed by the content of this module. A warm cache is a no-op.
# Prints the bin directory on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
key=$(cat go.mod go.sum build.sh cmd/*/main.go | sha256sum | cut -c1-16)
root="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/controlplane"
bin="$root/$key/bin"
binaries=(etcd kube-apiserver kube-controller-manager kubectl)
complete=1
for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || complete=0; done
if [ "$complete" = 1 ]; then
  echo "control plane binaries up to date ($key)" >&2
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
version=$(awk '$1=="k8s.io/kubernetes"{print $2}' go.mod)
mkdir -p "$bin.partial"
export CGO_ENABLED=0
# Two cores and 24 GiB: limit parallel compiles so the link of kube-apiserver does not starve.
flags=(-trimpath -p "${CONTROLPLANE_BUILD_JOBS:-2}" -ldflags "-s -w \
  -X k8s.io/component-base/version.gitVersion=${version} \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2) \
  -X k8s.io/client-go/pkg/version.gitVersion=${version}")
for b in "${binaries[@]}"; do
  echo "building $b (kubernetes $version)..." >&2
  go build "${flags[@]}" -o "$bin.partial/$b" "./cmd/$b"
done
rm -rf "$bin"
mv "$bin.partial" "$bin"
echo "$version" > "$root/$key/VERSION"
echo "$bin"
