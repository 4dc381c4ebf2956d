#!/usr/bin/env bash
# Builds the controller-runtime comparison webhook (main.go) from the Go module proxy into a cache
# outside the repository, keyed by the sources and the Go version. A warm cache is a no-op. Prints
# the binary's path last.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
key=$(cat "$here/go.mod" "$here/main.go" <(go env GOVERSION) | sha256sum | cut -c1-16)
dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/go-webhook/$key"
if [ -x "$dir/go-webhook" ]; then
  echo "$dir/go-webhook"
  exit 0
fi
src="$dir/src"
mkdir -p "$src"
cp "$here/go.mod" "$here/main.go" "$src/"
echo "building the controller-runtime webhook (first time: a few minutes)..." >&2
(cd "$src" && go mod tidy >&2 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/go-webhook" .)
echo "$dir/go-webhook"
