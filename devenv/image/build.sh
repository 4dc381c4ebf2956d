#!/usr/bin/env bash
# `npm run image`: builds staticsite-operator:<version> on a machine with no container registry,
# and everything `docker compose` needs here:
#   staticsite-local/debian:bookworm             Debian bookworm (debootstrap minbase), imported
#   staticsite-local/node:24                     build base (in place of node:24-bookworm-slim)
#   staticsite-local/nodejs24-runtime:nonroot    runtime base (in place of distroless nodejs24)
#   staticsite-operator:<version>                the Dockerfile, built on those two bases
#   staticsite-local/nginx-unprivileged:bookworm the site image (in place of nginxinc/nginx-unprivileged)
#   staticsite-local/bind9:9.18                  compose's DNS server (in place of internetsystemsconsortium/bind9)
#   staticsite-local/{etcd,kube-apiserver,kube-controller-manager,kubectl}:<version>
#                                                from the control plane's own binaries
#   staticsite-local/pause:3.10                  the test node's pod sandbox (devenv/node)
# Each local image carries a label with the key of its inputs; an image whose key is current is
# not built again, and the Debian root file system is kept as a tar in the cache, keyed the same way.
# Prints the operator image's name last.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/images"
mkdir -p "$cache"
# Docker Engine first, outside the lock: nothing long-lived may start while the lock is held.
bash "$here/docker-engine.sh"
exec 9>"$cache/.build.lock"
flock 9

LOCAL=staticsite-local
KEY_LABEL=dev.staticsite.key
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
started=$(date +%s)

say() { echo "image: $*" >&2; }
# The docker CLI without buildx prints a deprecation notice for every legacy build: keep it out of
# the log, and everything else in.
docker_build() {
  docker build --quiet --network host "$@" 2> >(grep -v -e 'legacy builder is deprecated' -e 'Install the buildx component' \
    -e 'docs.docker.com/go/buildx' -e '^ *$' >&2) >/dev/null
}
hash_of() { sha256sum | cut -c1-16; }
key_of_image() { docker image inspect --format "{{ index .Config.Labels \"$KEY_LABEL\" }}" "$1" 2>/dev/null || true; }

# build_keyed TAG KEY CONTEXT DOCKERFILE [docker build args...]: builds unless TAG already has KEY.
build_keyed() {
  local tag=$1 key=$2 context=$3 dockerfile=$4
  shift 4
  if [ "$(key_of_image "$tag")" = "$key" ]; then
    say "$tag up to date ($key)"
    return
  fi
  say "building $tag ($key)..."
  docker_build --label "$KEY_LABEL=$key" -t "$tag" -f "$dockerfile" "$@" "$context"
}

# A build context of its own for the files a Dockerfile copies, removed on exit.
contexts=$(mktemp -d)
trap 'rm -rf "$contexts"' EXIT

# 1. Debian bookworm from debootstrap, imported as a base image.
debian_image="$LOCAL/debian:bookworm"
debian_key=$(echo "debootstrap --variant=minbase bookworm $DEBIAN_MIRROR" | hash_of)
if [ "$(key_of_image "$debian_image")" != "$debian_key" ]; then
  rootfs_tar="$cache/debian-bookworm-minbase-$debian_key.tar"
  if [ ! -s "$rootfs_tar" ]; then
    command -v debootstrap >/dev/null || { echo "build.sh: debootstrap is required (apt-get install debootstrap)" >&2; exit 1; }
    say "debootstrap bookworm (minbase) from $DEBIAN_MIRROR, a few minutes..."
    rootfs="$contexts/rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$cache/debootstrap.log" 2>&1 \
      || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --numeric-owner -cf "$rootfs_tar.partial" .
    mv "$rootfs_tar.partial" "$rootfs_tar"
    rm -rf "$rootfs"
  fi
  say "importing $debian_image"
  docker import --change "LABEL $KEY_LABEL=$debian_key" --change 'CMD ["/bin/bash"]' "$rootfs_tar" "$debian_image" >/dev/null
fi

# 2. Node 24: the binary the project pins (npm's `node` package) and this machine's npm.
node_bin="$repo/node_modules/node/bin/node"
[ -x "$node_bin" ] || { echo "build.sh: $node_bin is missing; run npm ci first" >&2; exit 1; }
node_version=$("$node_bin" --version)
npm_dir="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
npm_version=$("$node_bin" -p "require('$npm_dir/package.json').version")

ca_bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
[ -s "$ca_bundle" ] || { echo "build.sh: no CA bundle at $ca_bundle (set SSL_CERT_FILE)" >&2; exit 1; }

build_base="$LOCAL/node:24"
build_key=$( (echo "$debian_key $node_version $npm_version"; cat "$ca_bundle" "$here/bases/node-build.Dockerfile") | hash_of)
if [ "$(key_of_image "$build_base")" != "$build_key" ]; then
  mkdir -p "$contexts/node-build"
  cp "$ca_bundle" "$contexts/node-build/ca-certificates.crt"
  cp "$node_bin" "$contexts/node-build/node"
  cp -r "$npm_dir" "$contexts/node-build/npm"
fi
build_keyed "$build_base" "$build_key" "$contexts/node-build" "$here/bases/node-build.Dockerfile" \
  --build-arg "DEBIAN_BASE=$debian_image"

runtime_base="$LOCAL/nodejs24-runtime:nonroot"
runtime_key=$( (echo "$debian_key $node_version"; cat "$here/bases/node-runtime.Dockerfile") | hash_of)
if [ "$(key_of_image "$runtime_base")" != "$runtime_key" ]; then
  mkdir -p "$contexts/node-runtime"
  # Debug symbols are a sixth of the binary and nothing at run time reads them.
  strip -o "$contexts/node-runtime/node" "$node_bin" 2>/dev/null || cp "$node_bin" "$contexts/node-runtime/node"
fi
build_keyed "$runtime_base" "$runtime_key" "$contexts/node-runtime" "$here/bases/node-runtime.Dockerfile" \
  --build-arg "DEBIAN_BASE=$debian_image"

# 3. The operator image: the Dockerfile users build, on the local bases. Docker's layer cache
# keys every step by its inputs, so an unchanged tree rebuilds nothing (at a new commit, only the
# `npm run build` step runs again: the commit is one of its inputs).
version=$("$node_bin" -p "require('$repo/package.json').version")
operator_image="staticsite-operator:$version"
# The commit `staticsite --version` names: the build context has no .git (devenv/build/source-commit.ts).
commit=$("$node_bin" --input-type=module --eval \
  "import { sourceCommit } from '$repo/devenv/build/source-commit.ts'; console.log(sourceCommit('$repo'))")
say "building $operator_image ($commit)..."
docker_build -t "$operator_image" --build-arg "BUILD_BASE=$build_base" --build-arg "RUNTIME_BASE=$runtime_base" \
  --build-arg "STATICSITE_COMMIT=$commit" "$repo"

# 4. The site image.
site_image="$LOCAL/nginx-unprivileged:bookworm"
site_key=$( (echo "$debian_key"; cat "$here/site/Dockerfile" "$here/site/nginx.conf" "$here/site/index.html") | hash_of)
build_keyed "$site_image" "$site_key" "$here/site" "$here/site/Dockerfile" --build-arg "DEBIAN_BASE=$debian_image"

# 4b. The DNS server for docker compose (in place of internetsystemsconsortium/bind9).
bind_image="$LOCAL/bind9:9.18"
bind_key=$( (echo "$debian_key"; cat "$here/bind9/Dockerfile") | hash_of)
build_keyed "$bind_image" "$bind_key" "$here/bind9" "$here/bind9/Dockerfile" --build-arg "DEBIAN_BASE=$debian_image"

# 5. The Kubernetes components, from the control plane's binaries.
bin=$(bash "$repo/devenv/controlplane/build.sh")
kube_version=$(cat "$bin/../VERSION")
etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "$repo/devenv/controlplane/go.mod")
for component in etcd kube-apiserver kube-controller-manager kubectl; do
  tag_version=$kube_version
  [ "$component" = etcd ] && tag_version=$etcd_version
  tag="$LOCAL/$component:$tag_version"
  key=$( (echo "$debian_key $component"; sha256sum "$bin/$component"; cat "$here/kube/Dockerfile") | hash_of)
  if [ "$(key_of_image "$tag")" != "$key" ]; then
    mkdir -p "$contexts/$component"
    cp "$bin/$component" "$contexts/$component/$component"
  fi
  build_keyed "$tag" "$key" "$contexts/$component" "$here/kube/Dockerfile" \
    --build-arg "DEBIAN_BASE=$debian_image" --build-arg "BINARY=$component"
done

# 6. The test node's binaries (kubelet, kube-proxy, kube-scheduler, pause) and its sandbox image.
node_cmds=$(bash "$repo/devenv/controlplane/build.sh" "$repo/devenv/node")
pause_image="$LOCAL/pause:3.10"
pause_key=$( (sha256sum "$node_cmds/pause"; cat "$here/pause/Dockerfile") | hash_of)
if [ "$(key_of_image "$pause_image")" != "$pause_key" ]; then
  mkdir -p "$contexts/pause"
  cp "$node_cmds/pause" "$contexts/pause/pause"
fi
build_keyed "$pause_image" "$pause_key" "$contexts/pause" "$here/pause/Dockerfile"

# 7. `docker compose` (Compose v2) when the docker CLI has none.
bash "$here/compose-plugin.sh"

size=$(docker image inspect --format '{{.Size}}' "$operator_image")
say "$operator_image: $((size / 1000000)) MB, all images ready in $(($(date +%s) - started)) s"
echo "$operator_image"
