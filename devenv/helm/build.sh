#!/usr/bin/env bash
# Builds helm (the CLI) from its Go module into a cache outside the repository, as Helm's own release
# build does (its Makefile's -X flags: the version and, for Helm 3, the Kubernetes version it assumes
# without a cluster, from the client-go it links; without them Helm 3 assumes v1.20 offline), keyed by
# the release, the flags and the Go version. A warm cache is a no-op.
# Usage: build.sh [HELM_VERSION]; prints the binary's path last.
set -euo pipefail
version="${1:-v4.3.2}"
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
major="${version%%.*}"
module="helm.sh/helm/$major"
ldflags="-s -w -X $module/internal/version.version=$version"
if [ "$major" = v3 ]; then
  gomod=$(go mod download -json "$module@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  client_go=$(awk '$1=="k8s.io/client-go"{print $2}' "$gomod")
  kube_minor=$(echo "$client_go" | cut -d. -f2)
  [ -n "$kube_minor" ] || { echo "build.sh: no k8s.io/client-go requirement in $gomod" >&2; exit 1; }
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags="$ldflags -X $module/$pkg.k8sVersionMajor=1 -X $module/$pkg.k8sVersionMinor=$kube_minor"
  done
fi
key=$(printf '%s %s %s' "$version" "$ldflags" "$(go env GOVERSION)" | sha256sum | cut -c1-16)
dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/helm/$key"
if [ -x "$dir/helm" ]; then
  echo "helm $version: cached ($key)" >&2
  echo "$dir/helm"
  exit 0
fi
mkdir -p "$dir"
echo "building helm $version ($key) from the Go module proxy (first time: a few minutes)..." >&2
CGO_ENABLED=0 GOBIN="$dir" go install -trimpath -ldflags "$ldflags" "$module/cmd/helm@$version" >&2
echo "$dir/helm"
