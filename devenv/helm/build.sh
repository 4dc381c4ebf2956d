#!/usr/bin/env bash
# Builds helm (the CLI) from its Go module into a cache outside the repository, keyed by the
# release and the Go version. A warm cache is a no-op. Usage: build.sh [HELM_VERSION]; prints the
# binary's path last.
set -euo pipefail
version="${1:-v4.3.2}"
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
key=$(printf '%s %s' "$version" "$(go env GOVERSION)" | sha256sum | cut -c1-16)
dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/helm/$key"
if [ -x "$dir/helm" ]; then
  echo "$dir/helm"
  exit 0
fi
mkdir -p "$dir"
echo "building helm $version from the Go module proxy (first time: a few minutes)..." >&2
major="${version%%.*}"
CGO_ENABLED=0 GOBIN="$dir" go install -trimpath -ldflags "-s -w" "helm.sh/helm/$major/cmd/helm@$version" >&2
echo "$dir/helm"
