#!/usr/bin/env bash
# Builds the two validators bench/validate.ts compares with, from the Go module proxy, into a cache
# outside the repository keyed by their versions: kubeconform (JSON Schema, no CEL) and
# kubectl-validate (the apiextensions validators, CEL included). A warm cache is a no-op. Prints
# the bin dir last.
set -euo pipefail
KUBECONFORM=github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
KUBECTL_VALIDATE=sigs.k8s.io/kubectl-validate@v0.0.4
key=$(echo "$KUBECONFORM $KUBECTL_VALIDATE $(go env GOVERSION 2>/dev/null || echo nogo)" | sha256sum | cut -c1-16)
bin="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/validators/$key/bin"
if [ -x "$bin/kubeconform" ] && [ -x "$bin/kubectl-validate" ]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
mkdir -p "$bin"
for module in "$KUBECONFORM" "$KUBECTL_VALIDATE"; do
  echo "building $module..." >&2
  CGO_ENABLED=0 GOBIN="$bin" go install -trimpath -ldflags "-s -w" "$module"
done
echo "$bin"
