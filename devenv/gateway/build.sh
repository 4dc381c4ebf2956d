#!/usr/bin/env bash
# Builds Traefik (a Gateway API implementation in one Go binary) from its Go module into a cache
# outside the repository, keyed by this script, the release and the Go version. A warm cache is a
# no-op. Usage: build.sh [TRAEFIK_VERSION]; prints the binary's path last.
#
# The module as served does not build on its own, so the build works on a copy (docs/exposing-sites.md):
# - the web dashboard's assets are made by Traefik's release build with yarn: a one-page placeholder
#   stands in (the dashboard stays off);
# - the dynamic-configuration extension module (github.com/traefik/traefik/dynamic/ext, replaced by a
#   folder the module zip leaves out) is not served: two empty types stand in, as in an open build;
# - Traefik's forks of go-http-auth and gorilla/mux are not served: the upstream modules are used; the
#   basic-auth middleware, which needs the fork's secret check, refuses every password, and the digest one
#   answers a stale nonce as a failed login (nothing here uses either), and
#   the request's decoded routing path, which Traefik's mux fork keeps under its own context key, is
#   kept under a key of Traefik's muxer package instead (the v2 rule syntax's path matchers, which only
#   the fork can give that path to, match the request's path; nothing here uses the v2 syntax);
# - ACME's DNS-01 providers for six clouds need SDK versions the proxy does not serve (Akamai, Huawei,
#   Oracle, Sakura, UCloud, Yandex): lego is built without those six. Nothing here uses ACME.
set -euo pipefail
version="${1:-v3.7.13}"
command -v go >/dev/null || { echo "build.sh: the Go toolchain is required (go not on PATH)" >&2; exit 1; }
module="github.com/traefik/traefik/v3"
ldflags="-s -w -X $module/pkg/version.Version=$version"
dropped="edgedns huaweicloud oraclecloud sakuracloud ucloud yandexcloud"
key=$( (cat "$0"; printf '%s %s %s' "$version" "$ldflags" "$(go env GOVERSION)") | sha256sum | cut -c1-16)
dir="${STATICSITE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/staticsite-operator}/traefik/$key"
if [ -x "$dir/traefik" ]; then
  echo "traefik $version: cached ($key)" >&2
  echo "$dir/traefik"
  exit 0
fi
echo "building traefik $version ($key) from the Go module proxy (first time: several minutes)..." >&2
module_dir() { go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }
source=$(module_dir "$module@$version")
[ -d "$source" ] || { echo "build.sh: go mod download gave no folder for $module@$version" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -R "$source/." "$work/traefik/" 2>/dev/null || { mkdir -p "$work/traefik" && cp -R "$source/." "$work/traefik/"; }
cd "$work/traefik"
chmod -R u+w .
mkdir -p webui/static pkg/config/dynamic/ext
echo '<!doctype html><title>Traefik</title>' >webui/static/index.html
printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.24\n' >pkg/config/dynamic/ext/go.mod
printf '// Package ext: no extensions to the dynamic configuration.\npackage ext\n\ntype HTTP struct{}\n\ntype Router struct{}\n' \
  >pkg/config/dynamic/ext/ext.go
lego_version=$(go list -m -f '{{.Version}}' github.com/go-acme/lego/v5)
lego=$(module_dir "github.com/go-acme/lego/v5@$lego_version")
cp -R "$lego/." "$work/lego/" 2>/dev/null || { mkdir -p "$work/lego" && cp -R "$lego/." "$work/lego/"; }
chmod -R u+w "$work/lego"
providers="$work/lego/providers/dns/zz_gen_dns_providers.go"
pattern=$(echo "$dropped" | tr ' ' '|')
# Drop each provider's import and its `case ...: return P.NewDNSProvider()` pair.
awk -v re="($pattern)" '
  $0 ~ "providers/dns/" re "\"$" { next }
  /^\tcase / { held = $0; next }
  held != "" { if ($0 ~ "return " re "\\.NewDNSProvider") { held = ""; next } print held; held = ""; print; next }
  { print }
' "$providers" >"$providers.new"
mv "$providers.new" "$providers"
sed -i 's/mux\.NewRouter()\.UseRoutingPath()/mux.NewRouter()/' pkg/muxer/http/matcher_v2.go
sed -i -e 's/mux\.RoutingPathKey/routingPathKey/' -e '/"github.com\/gorilla\/mux"/d' pkg/muxer/http/mux.go
printf '\ntype routingPathKeyType struct{}\n\nvar routingPathKey = routingPathKeyType{}\n' >>pkg/muxer/http/mux.go
sed -i 's/goauth\.CheckSecret,/func(string, string) bool { return false },/' pkg/middlewares/auth/basic_auth.go
sed -i 's/d\.auth\.RequireAuthStale(rw, req)/d.auth.RequireAuth(rw, req)/' pkg/middlewares/auth/digest_auth.go
go mod edit -dropreplace github.com/abbot/go-http-auth -dropreplace github.com/gorilla/mux \
  -require github.com/abbot/go-http-auth@v0.4.0 \
  -replace "github.com/go-acme/lego/v5=$work/lego"
mkdir -p "$dir"
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$dir/traefik.partial" ./cmd/traefik >&2
mv "$dir/traefik.partial" "$dir/traefik"
echo "$dir/traefik"
