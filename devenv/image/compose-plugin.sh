#!/usr/bin/env bash
# Makes `docker compose` (Compose v2) work: when the docker CLI has no compose plugin, builds
# github.com/docker/compose/v2 from the Go module proxy into a cache keyed by version and Go
# toolchain, and links it as a CLI plugin. Debian's docker-compose 1.29 is not enough: it reads
# neither the top-level `name` nor `service_completed_successfully` the way v2 does.
set -euo pipefail
version=v2.40.3
plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"

if docker compose version --short >/dev/null 2>&1; then
  echo "docker compose: $(docker compose version --short)" >&2
  exit 0
fi

export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "compose-plugin.sh: the Go toolchain is required to build Compose $version" >&2; exit 1; }
root="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/compose"
key=$(echo "$version $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)" | sha256sum | cut -c1-16)
binary="$root/$key/docker-compose"
mkdir -p "$root"
exec 9>"$root/.build.lock"
flock 9
if [ -x "$binary" ]; then
  echo "docker compose $version: cached ($key)" >&2
else
  echo "building Docker Compose $version ($key) from the Go module proxy, a few minutes..." >&2
  started=$(date +%s)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # The module's go.mod has exclude directives, which `go install pkg@version` refuses: build it
  # as the main module from a writable copy of its source.
  src=$(go mod download -json "github.com/docker/compose/v2@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "compose-plugin.sh: go mod download gave no source directory" >&2; exit 1; }
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && CGO_ENABLED=0 go build -trimpath -p "${COMPOSE_BUILD_JOBS:-2}" \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$version" -o "$work/docker-compose" ./cmd)
  mkdir -p "$(dirname "$binary")"
  mv "$work/docker-compose" "$binary"
  echo "built Compose $version in $(($(date +%s) - started)) s" >&2
fi
mkdir -p "$plugins"
ln -sf "$binary" "$plugins/docker-compose"
echo "docker compose: $(docker compose version --short)" >&2
