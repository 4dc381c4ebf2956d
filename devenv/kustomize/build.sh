#!/usr/bin/env bash
# Builds main.go (kubectl's own kustomize command) against one release of k8s.io/kubectl from the Go
# module proxy, into a cache outside the repository keyed by the release, the source and the Go
# version. A warm cache is a no-op. Usage: build.sh KUBECTL_MODULE_VERSION (v0.30.14 is kubectl
# 1.30); prints the binary's path last.
set -euo pipefail
version="${1:?usage: build.sh KUBECTL_MODULE_VERSION}"
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
key=$(cat "$here/main.go" <(echo "$version") <(go env GOVERSION) | sha256sum | cut -c1-16)
dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/kustomize/$key"
if [ -x "$dir/kubectl-kustomize" ]; then
  echo "kubectl $version's kustomize: cached ($key)" >&2
  echo "$dir/kubectl-kustomize"
  exit 0
fi
src="$dir/src"
mkdir -p "$src"
cp "$here/main.go" "$src/"
printf 'module staticsite.dev/devenv/kustomize\n\ngo 1.22\n\nrequire k8s.io/kubectl %s\n' "$version" > "$src/go.mod"
echo "building kubectl $version's kustomize command ($key; first time: about a minute)..." >&2
(cd "$src" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/kubectl-kustomize" .)
echo "$dir/kubectl-kustomize"
